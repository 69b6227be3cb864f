import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createTestDatabase, postgresUnavailable, queryDatabase, type TestDatabase } from "../support/postgres.js";
import { newApiKey } from "./support/postgres-app.js";
import { startServerProcess, type ServerProcess } from "../support/server-process.js";

const skip = await postgresUnavailable();

const burstMs = 1500;
const concurrency = 8;

interface Acknowledged {
  id: string;
  clientReference: string;
}

describe("PostgreSQL durability across SIGKILL", { skip, timeout: 45_000 }, () => {
  let db: TestDatabase;
  const key = newApiKey();
  const servers: ServerProcess[] = [];
  const start = async () => {
    const server = await startServerProcess({ databaseUrl: db.url, apiKeys: `merchantA:${key}` });
    servers.push(server);
    return server;
  };
  const call = (server: ServerProcess, method: string, path: string, body?: unknown) =>
    fetch(`${server.url}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(10_000),
    });

  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await db?.drop();
  });

  it("keeps every create it acknowledged, whole, when killed in the middle of a burst", async () => {
    const first = await start();
    const accountRes = await call(first, "POST", "/v2/settlement-accounts", {
      accountName: "Shop",
      accountNumber: "0123456789",
      bankName: "Test Bank",
      bankCode: "058",
    });
    assert.equal(accountRes.status, 201, await accountRes.clone().text());
    const accountId = ((await accountRes.json()) as { id: string }).id;

    const acknowledged: Acknowledged[] = [];
    const unexpected: string[] = [];
    let unanswered = 0;
    let sent = 0;
    let killed = false;
    const worker = async () => {
      while (!killed) {
        const clientReference = `kill9-${++sent}`;
        let res: Response;
        try {
          res = await call(first, "POST", "/v2/payment-intents", {
            amount: 10_000,
            customerEmail: "ada@example.com",
            clientReference,
            paymentMethod: ["card", "ussd"],
            settlementAccounts: [{ settlementAccountId: accountId, splitAmount: 4000 }],
          });
        } catch {
          // The process died with this request on the wire: no answer, no promise.
          unanswered++;
          return;
        }
        const text = await res.text().catch(() => undefined);
        if (text === undefined) {
          unanswered++;
          return;
        }
        if (res.status >= 200 && res.status < 300) {
          const intent = JSON.parse(text) as Acknowledged;
          assert.equal(intent.clientReference, clientReference);
          acknowledged.push({ id: intent.id, clientReference });
        } else {
          unexpected.push(`${res.status} ${text}`);
        }
      }
    };
    const workers = Array.from({ length: concurrency }, worker);
    await new Promise((resolve) => setTimeout(resolve, burstMs));
    first.child.kill("SIGKILL");
    assert.equal(await first.exited, "SIGKILL");
    killed = true;
    await Promise.all(workers);
    process.stdout.write(
      `# SIGKILL after ${burstMs} ms: ${acknowledged.length} creates acknowledged, ${unanswered} on the wire unanswered\n`,
    );
    assert.deepEqual(unexpected, []);
    assert.ok(acknowledged.length > 0, "some creates were acknowledged before the kill");

    const second = await start();
    const missing: string[] = [];
    for (let i = 0; i < acknowledged.length; i += 16) {
      await Promise.all(
        acknowledged.slice(i, i + 16).map(async ({ id, clientReference }) => {
          const res = await call(second, "GET", `/v2/payment-intents/${id}`);
          const body = (await res.json()) as { clientReference?: string };
          if (res.status !== 200 || body.clientReference !== clientReference) {
            missing.push(`${id} ${clientReference}: ${res.status} ${JSON.stringify(body)}`);
          }
        }),
      );
    }
    assert.deepEqual(missing, []);

    // Nothing half-written: every stored intent has both its methods and its split.
    const { rows } = await queryDatabase<{ intents: string; partial: string }>(
      db.url,
      `select count(*) as intents,
              count(*) filter (where coalesce(m.n, 0) <> 2 or coalesce(s.n, 0) <> 1) as partial
       from payment_intents pi
       left join (select payment_intent_id, count(*) as n from payment_intent_methods group by 1) m on m.payment_intent_id = pi.id
       left join (select payment_intent_id, count(*) as n from payment_intent_splits group by 1) s on s.payment_intent_id = pi.id`,
    );
    assert.equal(rows[0]!.partial, "0");
    assert.ok(Number(rows[0]!.intents) >= acknowledged.length, `${rows[0]!.intents} rows for ${acknowledged.length} acknowledged`);
  });
});
