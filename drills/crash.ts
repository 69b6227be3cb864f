import { createTestDatabase, queryDatabase } from "../test/support/postgres.js";
import { startServerProcess, type ServerProcess } from "../test/support/server-process.js";
import type { DrillReport } from "./support/drill-report.js";
import { drillServerEnv, newDrillKey } from "./support/process-target.js";

export interface CrashOptions {
  /** Creates in flight at once. */
  concurrency: number;
  /** How long the burst runs before the SIGKILL. */
  burstMs: number;
}

/**
 * runCrash: a burst of creates (each with two payment methods and a split)
 * against a server process, SIGKILL in the middle of it, a restart on the
 * same database. Every create that was answered 2xx must read back whole
 * after the restart, and no intent may be stored without its methods and
 * split (all or nothing: unanswered creates are either whole or absent).
 */
export async function runCrash(options: CrashOptions): Promise<DrillReport> {
  const db = await createTestDatabase();
  const merchant = { id: "crash", key: newDrillKey() };
  const servers: ServerProcess[] = [];
  const start = async () => {
    const server = await startServerProcess({ databaseUrl: db.url, apiKeys: `${merchant.id}:${merchant.key}`, env: drillServerEnv });
    servers.push(server);
    return server;
  };
  const call = (server: ServerProcess, method: string, path: string, body?: unknown) =>
    fetch(`${server.url}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${merchant.key}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(10_000),
    });
  try {
    const first = await start();
    const account = (await (
      await call(first, "POST", "/v2/settlement-accounts", { accountName: "Shop", accountNumber: "0123456789", bankName: "Bank", bankCode: "058" })
    ).json()) as { id: string };

    const acknowledged: { id: string; clientReference: string; amount: string }[] = [];
    const unexpected: string[] = [];
    let unanswered = 0;
    let sent = 0;
    let killed = false;
    const worker = async () => {
      while (!killed) {
        const clientReference = `crash-${++sent}`;
        const amount = 10_000 + sent;
        try {
          const res = await call(first, "POST", "/v2/payment-intents", {
            amount,
            customerEmail: "ada@example.com",
            clientReference,
            paymentMethod: ["card", "ussd"],
            settlementAccounts: [{ settlementAccountId: account.id, splitAmount: 4000 }],
          });
          const text = await res.text();
          if (res.status >= 200 && res.status < 300) {
            const body = JSON.parse(text) as { id: string; clientReference?: string };
            // An acknowledgement must be for the create that was sent.
            if (body.clientReference !== clientReference) unexpected.push(`${res.status} for ${clientReference}: ${text.slice(0, 200)}`);
            else acknowledged.push({ id: body.id, clientReference, amount: String(amount) });
          } else {
            unexpected.push(`${res.status} ${text.slice(0, 200)}`);
          }
        } catch {
          // The process died with this request on the wire: no answer, no promise.
          unanswered++;
          return;
        }
      }
    };
    const workers = Array.from({ length: options.concurrency }, worker);
    await new Promise((resolve) => setTimeout(resolve, options.burstMs));
    first.child.kill("SIGKILL");
    const how = await first.exited;
    killed = true;
    await Promise.all(workers);

    const restartStarted = performance.now();
    const second = await start();
    const restartSeconds = (performance.now() - restartStarted) / 1000;
    const missing: string[] = [];
    for (let i = 0; i < acknowledged.length; i += 16) {
      await Promise.all(
        acknowledged.slice(i, i + 16).map(async ({ id, clientReference, amount }) => {
          const res = await call(second, "GET", `/v2/payment-intents/${id}`);
          const body = (await res.json()) as { clientReference?: string; amount?: string; paymentMethods?: unknown[]; settlementAccount?: { id?: string } };
          if (
            res.status !== 200 ||
            body.clientReference !== clientReference ||
            body.amount !== amount ||
            body.paymentMethods?.length !== 2 ||
            body.settlementAccount?.id !== account.id
          ) {
            missing.push(`${id}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
          }
        }),
      );
    }
    const { rows } = await queryDatabase<{ intents: string; partial: string }>(
      db.url,
      `select count(*) as intents,
              count(*) filter (where cardinality(pi.payment_methods) <> 2 or coalesce(s.n, 0) <> 1) as partial
       from payment_intents pi
       left join (select payment_intent_id, count(*) as n from payment_intent_splits group by 1) s on s.payment_intent_id = pi.id
       where pi.merchant_id = $1`,
      [merchant.id],
    );
    const stored = Number(rows[0]!.intents);
    const partial = Number(rows[0]!.partial);
    const passed = how === "SIGKILL" && acknowledged.length > 0 && missing.length === 0 && partial === 0 && unexpected.length === 0;
    return {
      name: "Crash",
      did: `${options.concurrency} concurrent creates (2 methods and a split each) for ${options.burstMs} ms, SIGKILL of the server process mid-burst, restart on the same database`,
      headline: `${acknowledged.length} creates answered 2xx, ${acknowledged.length - missing.length} present after restart, ${partial} half-written`,
      figures: [
        `killed by ${how}; ${unanswered} requests on the wire got no answer; ${unexpected.length} non-2xx answers before the kill${unexpected.length ? ` (${unexpected.slice(0, 2).join("; ")})` : ""}`,
        `after the restart (${restartSeconds.toFixed(1)} s): ${stored} intents stored (acknowledged ${acknowledged.length} + unanswered that had committed ${stored - acknowledged.length}); acknowledged but missing or different: ${missing.length}; intents without both methods and their split: ${partial}`,
        ...missing.slice(0, 3),
      ],
      passed,
    };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await db.drop();
  }
}
