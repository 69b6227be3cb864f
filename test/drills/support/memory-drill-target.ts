import type { DrillTarget } from "../../../drills/support/drill-target.js";
import type { TestServer } from "../../support/test-server.js";

/**
 * memoryDrillTarget points the drills at a test server on the in-memory
 * stores: merchants a and b are the test server's merchantA and merchantB,
 * and what is stored is read from its stores directly.
 */
export function memoryDrillTarget(server: TestServer): DrillTarget {
  let closed = false;
  const originalClose = server.close;
  server.close = async () => {
    closed = true;
    await originalClose();
  };
  return {
    url: server.url,
    basePath: server.restUrl.slice(server.url.length),
    merchants: {
      a: { id: "merchantA", key: server.keys["merchantA"]!, liveKey: server.liveKeys["merchantA"]! },
      b: { id: "merchantB", key: server.keys["merchantB"]! },
    },
    storedReferences: async (merchantId) =>
      (await server.intents.list({ livemode: false, merchantId, limit: Number.MAX_SAFE_INTEGER, now: new Date() })).map(({ intent }) => intent.clientReference),
    storedAccounts: async (merchantId) =>
      (await server.accounts.listByMerchant({ livemode: false, merchantId, limit: Number.MAX_SAFE_INTEGER })).map((account) => account.id),
    storedEndpoints: async (merchantId) => (await server.recordedWebhooks.endpoints.list(merchantId)).map((endpoint) => endpoint.id),
    // The server runs in this process: if it had crashed, so would the test.
    alive: () => !closed,
  };
}
