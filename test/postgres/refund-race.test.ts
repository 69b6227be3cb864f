import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { RefundOutcome, RefundRequest } from "../../src/processor/payment-processor.js";
import { createTestModeProcessor } from "../../src/processor/test-mode-processor.js";
import { createManualClock } from "../support/manual-clock.js";
import { createTestDatabase, postgresUnavailable, queryDatabase, type TestDatabase } from "../support/postgres.js";
import { paidIntent, refundRoutes, type RefundJson } from "../support/refund-client.js";
import { createRestClient, expectJson, uniqueReference, type EventJson, type RestClient } from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const unavailable = await postgresUnavailable();

/**
 * Two instances of the service on one PostgreSQL database, and one processor
 * behind both (the test-mode processor, which refunds each idempotency key
 * once and never more than a payment's amount, and counts what it did): the
 * race the issue names, across instances, where only the database can keep
 * refunds within what was paid.
 */
describe("refunds on two instances of one PostgreSQL database", { skip: unavailable }, () => {
  let db: TestDatabase;
  const clock = createManualClock("2026-12-08T12:00:00.000Z");
  const processor = createTestModeProcessor();
  /** Payments (by reference) whose refunds' first answer is lost: unknown (a timeout), though the processor got the call. */
  const loseFirstAnswer = new Set<string>();
  const refundCalls = new Map<string, number>();
  const shared = {
    ...processor,
    async refund(request: RefundRequest, signal: AbortSignal): Promise<RefundOutcome> {
      const calls = (refundCalls.get(request.idempotencyKey) ?? 0) + 1;
      refundCalls.set(request.idempotencyKey, calls);
      const outcome = await processor.refund(request, signal);
      return calls === 1 && loseFirstAnswer.has(request.attempt.reference ?? "") ? { kind: "unknown", reason: "timed out" } : outcome;
    },
  };
  let servers: TestServer[] = [];
  let clients: RestClient[] = [];

  before(async () => {
    db = await createTestDatabase();
    // One after the other: the first migrates the database, the second finds it migrated.
    for (let i = 0; i < 2; i++) servers.push(await startTestServer({ clock, databaseUrl: db.url, processor: shared }));
    clients = servers.map(createRestClient);
  });
  after(async () => {
    for (const server of servers) await server.close();
    await db?.drop();
  });

  it("keeps 100 concurrent refunds of one intent, spread over both instances, within what was paid", async () => {
    const intent = await paidIntent(clients[0]!, { amount: 50_000 });
    const bodies = Array.from({ length: 100 }, (_, i) => {
      // Every tenth asks for what is left; every seventh repeats the previous request (a client retrying).
      const reference = i % 7 === 6 ? `race-${i - 1}` : `race-${i}`;
      const n = i % 7 === 6 ? i - 1 : i;
      return n % 10 === 9 ? { clientReference: reference } : { amount: 700 + (n % 5) * 300, clientReference: reference };
    });
    const answers = await Promise.all(
      bodies.map(async (body, i) => {
        const res = await refundRoutes(clients[i % 2]!).create(intent.id, body);
        return { status: res.status, body: JSON.parse(res.text) as RefundJson & { message?: string } };
      }),
    );
    const byStatus = new Map<number, number>();
    for (const a of answers) byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
    assert.deepEqual([...byStatus.keys()].filter((s) => ![200, 201, 409].includes(s)), [], `statuses: ${JSON.stringify([...byStatus])}`);

    const created = answers.filter((a) => a.status === 201).map((a) => a.body);
    const paidBack = created.reduce((sum, r) => sum + (r.status === "successful" ? BigInt(r.amount) : 0n), 0n);
    assert.ok(paidBack <= 50_000n, `refunded ${paidBack} of 50000`);
    assert.ok(created.every((r) => r.status === "successful"));
    // A replay answers the refund its reference made, never a second one.
    const ids = new Map<string, string>();
    for (const a of answers.filter((x) => x.status === 200 || x.status === 201)) {
      const seen = ids.get(a.body.clientReference!);
      if (seen) assert.equal(a.body.id, seen);
      else ids.set(a.body.clientReference!, a.body.id);
    }
    // The database, the API and the processor agree.
    const { rows } = await queryDatabase<{ refunded: string; total: string; count: string }>(
      db.url,
      `select pi.amount_refunded as refunded, coalesce(sum(r.amount) filter (where r.status <> 'failed'), 0) as total, count(r.*) as count
       from payment_intents pi left join refunds r on r.merchant_id = pi.merchant_id and r.payment_intent_id = pi.id
       where pi.id = $1 group by pi.amount_refunded`,
      [intent.id],
    );
    assert.deepEqual(rows[0], { refunded: String(paidBack), total: String(paidBack), count: String(created.length) });
    const listed = expectJson<{ refunds: RefundJson[] }>(await refundRoutes(clients[1]!).list(intent.id, "pageSize=100"), 200).refunds;
    assert.deepEqual(new Set(listed.map((r) => r.id)), new Set(created.map((r) => r.id)));
    assert.equal(processor.refundedByPayment().get(intent.transaction!), paidBack);
    for (const refund of created) assert.equal(refundCalls.get(refund.id), 1, `${refund.id} was refunded once`);
    // Whatever is left was refused only because it did not fit.
    const left = 50_000n - paidBack;
    for (const refused of answers.filter((a) => a.status === 409)) {
      assert.match(refused.body.message!, /is more than the \d+ left to refund|is refunded in full already/);
    }
    if (left > 0n) assert.ok(answers.some((a) => a.status === 409), "refunds were refused only when they did not fit");
  });

  it("settles each refund whose answer was lost exactly once, with reconcilers on both instances running at once", async () => {
    const intent = await paidIntent(clients[0]!, { amount: 40_000 });
    loseFirstAnswer.add(intent.transaction!);
    const made = await Promise.all(
      Array.from({ length: 20 }, (_, i) => refundRoutes(clients[i % 2]!).create(intent.id, { amount: 1000, clientReference: uniqueReference("lost") })),
    );
    const pending = made.map((res) => JSON.parse(res.text) as RefundJson);
    assert.ok(pending.every((r) => r.status === "pending"), "every first answer was lost");
    clock.advance(60_000);
    const signal = new AbortController().signal;
    const rounds = await Promise.all(servers.flatMap((s) => [s.refundParts.reconciler.runOnce(clock.now(), signal), s.refundParts.reconciler.runOnce(clock.now(), signal)]));
    assert.equal(rounds.reduce((a, b) => a + b, 0), 20, "each refund settled by exactly one reconciler round");
    for (const refund of pending) assert.equal(refundCalls.get(refund.id), 2, `${refund.id}: the request's call and one reconciler's`);
    const events = expectJson<{ events: EventJson[] }>(await clients[0]!.request("GET", `/v2/events?paymentIntentId=${intent.id}&type=refund.succeeded&pageSize=100`), 200).events;
    assert.deepEqual(new Set(events.map((e) => e.refund!.id)), new Set(pending.map((r) => r.id)));
    assert.equal(events.length, 20);
    assert.equal(processor.refundedByPayment().get(intent.transaction!), 20_000n);
  });
});
