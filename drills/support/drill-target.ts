/** A merchant the drills act as. */
export interface DrillMerchant {
  id: string;
  /** A test-mode key with every scope. */
  key: string;
  /** A live-mode key of the same merchant (issue 23): the tenant drill's mode checks. */
  liveKey?: string;
}

/**
 * DrillTarget is a running service the drills talk to, whatever runs it: a
 * server built in the test process on the in-memory stores (CI), or a server
 * process on PostgreSQL (npm run drills). The stored* functions read beside
 * the API (the store, or SQL), so a drill can tell what was really written.
 */
export interface DrillTarget {
  /** Origin, e.g. http://127.0.0.1:41234 */
  url: string;
  /** REST mount point, e.g. "/v1". */
  basePath: string;
  /** Two merchants with keys: "a" and "b". */
  merchants: { a: DrillMerchant; b: DrillMerchant };
  /** clientReferences of the merchant's stored live intents. */
  storedReferences(merchantId: string): Promise<string[]>;
  /** Ids of the merchant's stored settlement accounts. */
  storedAccounts(merchantId: string): Promise<string[]>;
  /** Ids of the merchant's stored (not deleted) webhook endpoints. */
  storedEndpoints(merchantId: string): Promise<string[]>;
  /** False once the server has crashed or exited. */
  alive(): boolean;
}
