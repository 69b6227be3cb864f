import { describe } from "node:test";
import { openMigratedStores, postgresUnavailable, useMigratedDatabase } from "../support/postgres.js";
import { contractMerchants } from "./contract-records.js";
import { describeRefundStoreContract } from "./refund-store-contract.js";

const unavailable = await postgresUnavailable();

if (unavailable) {
  describe("postgres stores: refund store contract", { skip: unavailable }, () => {});
} else {
  // Each test's stores are opened anew (the outbox is given at opening), on an emptied database.
  const database = useMigratedDatabase();
  describeRefundStoreContract("postgres stores", async (outbox) => {
    await database.empty();
    const stores = await openMigratedStores(database.url(), { migrate: false, poolMax: 8, outbox });
    for (const merchantId of Object.values(contractMerchants)) await stores.apiKeys.ensureMerchant(merchantId, merchantId);
    return { intents: stores.intents, refunds: stores.refunds, events: stores.events, close: () => stores.close() };
  });
}
