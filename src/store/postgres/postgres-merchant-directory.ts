import type { MerchantDirectory } from "../merchant-directory.js";
import { isStorableText } from "../storable-text.js";
import type { Database } from "./database.js";

const nameText = "select name from merchants where id = $1";

/** createPostgresMerchantDirectory reads merchant names from the merchants table. */
export function createPostgresMerchantDirectory(db: Database): MerchantDirectory {
  return {
    async nameOf(merchantId) {
      if (!isStorableText(merchantId)) return undefined;
      const [result] = await db.run(false, [{ text: nameText, values: [merchantId] }]);
      return result!.rows[0]?.[0] ?? undefined;
    },
  };
}
