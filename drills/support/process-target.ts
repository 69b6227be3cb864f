import { randomBytes } from "node:crypto";
import { newApiKey } from "../../src/auth/api-key-format.js";
import { createTestDatabase, queryDatabase, type TestDatabase } from "../../test/support/postgres.js";
import { startServerProcess, type ServerProcess, type ServerProcessOptions } from "../../test/support/server-process.js";
import type { DrillTarget } from "./drill-target.js";

/**
 * Settings every drill server runs with. RATE_LIMIT_RPS=0: the drills send
 * hundreds of requests a second from one key, and the per-key limiter would
 * turn most of them into 429s instead of exercising what each drill is about;
 * AUTH_FAILURES_PER_MINUTE=0: the tenant drill sends wrong keys on purpose.
 */
export const drillServerEnv: Record<string, string> = { RATE_LIMIT_RPS: "0", AUTH_FAILURES_PER_MINUTE: "0" };

/** newDrillKey makes an API key for a drill merchant. */
export const newDrillKey = () => `sk_drill_${randomBytes(18).toString("base64url")}`;

export interface ProcessTarget extends DrillTarget {
  server: ServerProcess;
  db: TestDatabase;
  close(): Promise<void>;
}

/**
 * startProcessTarget runs the service as a real process (src/main.ts) on a
 * fresh PostgreSQL database with merchants a and b, and reads what is stored
 * with SQL. env adds to (or overrides) drillServerEnv; nodeArgs go to node.
 */
export async function startProcessTarget(options: Pick<ServerProcessOptions, "env" | "nodeArgs"> = {}): Promise<ProcessTarget> {
  const db = await createTestDatabase();
  const merchants = { a: { id: "drill_a", key: newDrillKey(), liveKey: newApiKey("live") }, b: { id: "drill_b", key: newDrillKey() } };
  try {
    const server = await startServerProcess({
      databaseUrl: db.url,
      apiKeys: `${merchants.a.id}:${merchants.a.key},${merchants.a.id}:${merchants.a.liveKey},${merchants.b.id}:${merchants.b.key}`,
      env: { ...drillServerEnv, ...options.env },
      nodeArgs: options.nodeArgs,
    });
    return {
      url: server.url,
      basePath: "/v1",
      merchants,
      server,
      db,
      storedReferences: async (merchantId) =>
        (
          await queryDatabase<{ client_reference: string }>(
            db.url,
            "select client_reference from payment_intents where merchant_id = $1 and deleted_at is null",
            [merchantId],
          )
        ).rows.map((r) => r.client_reference),
      storedAccounts: async (merchantId) =>
        (await queryDatabase<{ id: string }>(db.url, "select id from settlement_accounts where merchant_id = $1", [merchantId])).rows.map(
          (r) => r.id,
        ),
      storedEndpoints: async (merchantId) =>
        (
          await queryDatabase<{ id: string }>(db.url, "select id from webhook_endpoints where merchant_id = $1 and deleted_at is null", [merchantId])
        ).rows.map((r) => r.id),
      alive: () => server.child.exitCode === null && server.child.signalCode === null,
      close: async () => {
        await server.stop();
        await db.drop();
      },
    };
  } catch (error) {
    await db.drop();
    throw error;
  }
}
