import type { EntityManager } from "@mikro-orm/postgresql";
import type { MerchantDirectory } from "../merchant-directory.js";
import { withDatabaseErrors } from "./database-errors.js";
import { MerchantEntity } from "./entities/merchant-entity.js";

/** createPostgresMerchantDirectory reads merchant names from the merchants table. */
export function createPostgresMerchantDirectory(root: EntityManager): MerchantDirectory {
  return {
    nameOf: (merchantId) =>
      withDatabaseErrors(async () => (await root.fork({ clear: true }).findOne(MerchantEntity, { id: merchantId }))?.name),
  };
}
