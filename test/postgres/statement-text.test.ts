import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import type { PaymentIntentRecord } from "../../src/domain/payment-intent.js";
import { createManualClock } from "../support/manual-clock.js";
import { createTestDatabase, openMigratedStores, postgresUnavailable, type TestDatabase } from "../support/postgres.js";
import type { PostgresStores } from "../../src/store/postgres/open-postgres-stores.js";
import type { EventOutbox } from "../../src/store/event-store.js";
import { createSecretBox } from "../../src/lib/secret-box.js";
import { createStatementCapture, type StatementCapture } from "./support/statement-capture.js";

const skip = await postgresUnavailable();

/** Values only this test sends: none may appear in any SQL text the server receives (and so in its log). */
const tag = randomBytes(4).toString("hex");
const values = {
  merchantId: `mStmt_${tag}`,
  merchantName: `Distinct Name ${tag}`,
  apiKey: `sk_test_Distinct${tag}KeyValue0123456789`,
  unknownKey: `sk_test_Unknown${tag}KeyValue0123456789`,
  madeKey: `sk_test_Made${tag}KeyValue01234567890123`,
  rolledKey: `sk_test_Rolled${tag}KeyValue012345678901`,
  keyName: `Key "${tag}" o'name; drop --`,
  cidr: `198.51.${parseInt(tag.slice(0, 2), 16)}.0/24`,
  accountId: `sa_odd'"\\;--é€😀_${tag}`,
  accountName: `Zyx O'Account "${tag}"`,
  accountNumber: "9876501234",
  bankName: `Qwerty Bank ${tag}`,
  bankCode: "99912",
  intentId: `pi_odd'"\\;--é€😀_${tag}`,
  otherIntentId: `pi_second_${tag}`,
  customerEmail: `ada.o'brien+${tag}@example.org`,
  receiptEmail: `receipts+${tag}@example.org`,
  clientReference: `ref.distinct:${tag}`,
  otherReference: `ref.other:${tag}`,
  callbackUrl: `https://distinct.example.org/cb?q='${tag}'&y="z"`,
  checkoutToken: `tok_${tag}_${randomBytes(16).toString("base64url")}`,
  otherToken: `tok2_${tag}_${randomBytes(16).toString("base64url")}`,
  fingerprint: `${tag}${"ab".repeat(28)}`,
  transaction: `txn-distinct-${tag}`,
  attemptId: `pa_distinct_${tag}`,
  processorReference: `proc-ref-${tag}`,
  declineReason: `Distinct decline ${tag}`,
  amount: 987_654_321n,
  splitAmount: 12_345_678n,
  metaName: `k.${tag}`,
  metaValue: `Meta "${tag}" o'clock; drop --`,
};

describe("no client value in any SQL text", { skip }, () => {
  let db: TestDatabase;
  let capture: StatementCapture;
  let stores: PostgresStores;
  const clock = createManualClock("2026-03-01T10:00:00.000Z");

  before(async () => {
    db = await createTestDatabase();
    // Migrations first, directly: what is captured is the stores' traffic alone.
    await (await openMigratedStores(db.url, { poolMax: 1 })).close();
    const direct = new URL(db.url);
    capture = await createStatementCapture({ host: direct.hostname, port: Number(direct.port || 5432) });
    const viaCapture = new URL(db.url);
    viaCapture.port = String(capture.port);
    stores = await openMigratedStores(viaCapture.toString(), { poolMax: 3, clock, migrate: false });
  });
  after(async () => {
    await stores?.close();
    await capture?.close();
    await db?.drop();
  });

  it("sends every value of every store method as a bind parameter", async () => {
    const { intents, accounts, apiKeys, merchants, health } = stores;
    await apiKeys.ensureMerchant(values.merchantId, values.merchantName);
    const key = await apiKeys.addKey(values.merchantId, values.apiKey);
    const principal = await apiKeys.verify(values.apiKey);
    assert.deepEqual(principal && [principal.merchantId, principal.merchantName, principal.livemode], [values.merchantId, values.merchantName, false]);
    assert.equal(await apiKeys.verify(values.unknownKey), undefined);
    assert.equal((await apiKeys.listKeys()).length, 1);
    assert.equal(await apiKeys.countActiveKeys(), 1);
    // The key API's methods.
    const made = await apiKeys.createKey({
      merchantId: values.merchantId,
      key: values.madeKey,
      mode: "test",
      name: values.keyName,
      scopes: ["payment_intents:read"],
      allowedCidrs: [values.cidr],
      expiresAt: new Date(clock.now().getTime() + 86_400_000),
    });
    assert.deepEqual((await apiKeys.listMerchantKeys(values.merchantId, ["test"])).map((k) => k.name), ["", values.keyName]);
    assert.equal((await apiKeys.findKey(values.merchantId, made.id))?.allowedCidrs[0], values.cidr);
    await apiKeys.markUsed(values.merchantId, made.id, clock.now());
    const rolled = await apiKeys.rollKey(values.merchantId, made.id, values.rolledKey, new Date(clock.now().getTime() + 60_000));
    assert.equal(rolled?.created.name, values.keyName);
    assert.ok(await apiKeys.revokeMerchantKey(values.merchantId, rolled.created.id));
    assert.equal(await merchants.nameOf(values.merchantId), values.merchantName);
    await health.probe();
    assert.equal(health.state().reachable, true);
    assert.deepEqual((await stores.checkSettings()).mismatches, []);

    const now = clock.now();
    const account = {
      livemode: false,
      id: values.accountId,
      merchantId: values.merchantId,
      accountName: values.accountName,
      accountNumber: values.accountNumber,
      bankName: values.bankName,
      bankCode: values.bankCode,
      createdAt: now,
      updatedAt: now,
    };
    assert.equal((await accounts.insert(account, { maxPerMerchant: 5 })).inserted, true);
    assert.equal((await accounts.insert({ ...account, id: `${values.accountId}2` }, { maxPerMerchant: 5 })).inserted, false);
    assert.equal((await accounts.listByMerchant({ livemode: false, merchantId: values.merchantId, limit: 5, after: { createdAt: now, id: `${values.accountId}~` } })).length, 1);
    assert.equal((await accounts.findByIds(values.merchantId, [values.accountId])).length, 1);
    assert.equal((await accounts.findEarliest(values.merchantId, false))?.id, values.accountId);

    const record: PaymentIntentRecord = {
      livemode: false,
      id: values.intentId,
      merchantId: values.merchantId,
      amount: values.amount,
      totalAmount: values.amount,
      currency: "NGN",
      country: "NG",
      customerEmail: values.customerEmail,
      receiptEmail: values.receiptEmail,
      status: "pending",
      clientReference: values.clientReference,
      paymentMethods: ["card", "bank_transfer"],
      callbackUrl: values.callbackUrl,
      transaction: null,
      nextActionUrl: null,
      splits: [{ settlementAccountId: values.accountId, splitAmount: values.splitAmount }],
      meta: [{ name: values.metaName, value: values.metaValue }],
      checkoutToken: values.checkoutToken,
      requestFingerprint: values.fingerprint,
      createdAt: now,
      updatedAt: now,
      expiresAt: new Date(now.getTime() + 60_000),
      deletedAt: null,
      amountRefunded: 0n,
    };
    assert.equal((await intents.insert(record)).inserted, true);
    // The idempotent replay, and a second intent to pay and expire.
    assert.equal((await intents.insert({ ...record, id: values.otherIntentId })).inserted, false);
    const second = { ...record, id: values.otherIntentId, clientReference: values.otherReference, checkoutToken: values.otherToken };
    assert.equal((await intents.insert(second)).inserted, true);

    assert.equal((await intents.findById(values.merchantId, values.intentId))?.callbackUrl, values.callbackUrl);
    assert.equal((await intents.findWithAccount(values.merchantId, values.intentId))?.account?.id, values.accountId);
    assert.equal((await intents.findByCheckoutToken(values.checkoutToken))?.id, values.intentId);
    for (const status of [undefined, "pending", "expired", "successful"] as const) {
      await intents.list({ livemode: false, merchantId: values.merchantId, limit: 10, status, now });
      await intents.list({ livemode: false, merchantId: values.merchantId, limit: 10, status, now, clientReference: values.clientReference });
      await intents.list({ livemode: false, merchantId: values.merchantId, limit: 10, status, now, after: { createdAt: now, id: values.otherIntentId } });
      const meta = [{ name: values.metaName, value: values.metaValue }, { name: `${values.metaName}2`, value: values.metaValue }];
      await intents.list({ livemode: false, merchantId: values.merchantId, limit: 10, status, now, meta, after: { createdAt: now, id: values.otherIntentId } });
    }
    const begun = await intents.beginAttempt(
      {
        id: values.attemptId,
        paymentIntentId: values.otherIntentId,
        merchantId: values.merchantId,
        amount: record.amount,
        method: "card",
        outcome: "processing",
        processorReference: null,
        processor: "test",
        idempotencyKey: values.attemptId,
        nextActionUrl: null,
        lateSuccess: null,
        declineReason: null,
        createdAt: now,
        settledAt: null,
      },
      now,
    );
    assert.equal(begun?.begun, true);
    const paid = await intents.settleAttempt(
      values.merchantId,
      values.attemptId,
      { outcome: "declined", processorReference: values.processorReference, declineReason: values.declineReason },
      { at: now, maxAttempts: 3 },
    );
    assert.equal(paid?.attempt.id, values.attemptId);
    assert.equal((await intents.listAttempts(values.merchantId, values.otherIntentId)).length, 1);
    assert.equal(
      (await intents.transition(values.merchantId, values.intentId, { from: "pending", to: "successful", at: now, transaction: values.transaction }))
        ?.transaction,
      values.transaction,
    );
    assert.equal((await intents.expireDue(new Date(now.getTime() + 120_000), 10)).length, 1);
    assert.equal(await intents.cancel(values.merchantId, values.otherIntentId, now), undefined);
    assert.equal(await apiKeys.revokeKey(key.id), true);

    // What the server received.
    const texts = capture.statements.map((s) => s.text);
    assert.ok(texts.length > 30, `captured ${texts.length} statements`);
    assert.ok(capture.bindBytes > 1000, "values travelled in Bind messages");
    assert.deepEqual(
      capture.statements.filter((s) => s.kind !== "parse").map((s) => s.text),
      [],
      "the stores send no simple-protocol query",
    );
    // Each connection is a session of its own here, so each text is prepared
    // (sent) at most once per pooled connection.
    assert.equal(stores.settings.preparedStatements.usable, true);
    // Except the meta-filtered lists: unnamed, so PostgreSQL plans each with its values (intent-sql.ts).
    const metaFiltered = capture.statements.filter((s) => s.text.includes("from payment_intent_meta m0"));
    assert.ok(metaFiltered.length >= 4, `captured ${metaFiltered.length} meta-filtered lists`);
    assert.deepEqual(metaFiltered.filter((s) => s.name !== ""), [], "a meta-filtered list was prepared by name");
    const perText = new Map<string, number>();
    for (const text of texts.filter((t) => !t.includes("from payment_intent_meta m0"))) perText.set(text, (perText.get(text) ?? 0) + 1);
    assert.ok(Math.max(...perText.values()) <= 3, "a statement text was sent more often than there are connections");
    const sent = [
      ...Object.values(values).map(String),
      values.apiKey.slice(0, 12),
      key.id,
      tag,
    ];
    for (const value of sent) {
      const found = texts.find((text) => text.includes(value));
      assert.equal(found, undefined, `${JSON.stringify(value)} appears in: ${found}`);
    }
  });
  it("sends every value of the events, webhook endpoints and delivery queue as a bind parameter", async () => {
    const from = capture.statements.length;
    const hooks = {
      merchantId: `mHook_${tag}`,
      endpointId: `we_odd'"\\;--é€😀_${tag}`,
      url: `https://hooks-${tag}.example.org/in?x='${tag}'`,
      description: `Orders "${tag}" o'clock`,
      secret: `whsec_Distinct${tag}Secret`,
      newSecret: `whsec_Rotated${tag}Secret`,
      intentId: `pi_hook'"_${tag}`,
      reference: `ref.hook:${tag}`,
      token: `tokh_${tag}_${randomBytes(16).toString("base64url")}`,
      eventId: `evt_odd'"\\_${tag}`,
      deliveryId: `whd_odd'"_${tag}`,
      body: `{"distinct":"${tag}-body"}`,
      owner: `owner-${tag}`,
    };
    let deliveries = 0;
    let events = 0;
    const outbox: EventOutbox = {
      // The first event keeps the plain id, for the lookups below.
      render: (type, change, at) => ({ id: events++ === 0 ? hooks.eventId : `${hooks.eventId}${events}`, createdAt: at, payload: Buffer.from(`payload-${tag}`), body: hooks.body }),
      deliveryId: () => `${hooks.deliveryId}${++deliveries}`,
      committed: () => {},
    };
    const viaCapture = new URL(db.url);
    viaCapture.port = String(capture.port);
    const hooked = await openMigratedStores(viaCapture.toString(), {
      poolMax: 2,
      clock,
      migrate: false,
      outbox,
      secretBox: createSecretBox({ key: Buffer.alloc(32, 3) }),
    });
    try {
      const now = clock.now();
      await hooked.apiKeys.ensureMerchant(hooks.merchantId, `Hooks ${tag}`);
      const created = await hooked.endpoints.create(
        { livemode: false, id: hooks.endpointId, merchantId: hooks.merchantId, url: hooks.url, eventTypes: ["payment_intent.created"], description: hooks.description, secret: hooks.secret, createdAt: now },
        5,
      );
      assert.equal(created.created, true);
      await hooked.endpoints.list(hooks.merchantId);
      await hooked.endpoints.findById(hooks.merchantId, hooks.endpointId);
      await hooked.endpoints.rotateSecret(hooks.merchantId, hooks.endpointId, hooks.newSecret, now, 86_400_000);

      const record: PaymentIntentRecord = {
        livemode: false,
        id: hooks.intentId,
        merchantId: hooks.merchantId,
        amount: values.amount,
        totalAmount: values.amount,
        currency: "NGN",
        country: "NG",
        customerEmail: values.customerEmail,
        receiptEmail: values.receiptEmail,
        status: "pending",
        clientReference: hooks.reference,
        paymentMethods: ["card"],
        callbackUrl: null,
        transaction: null,
        nextActionUrl: null,
        splits: [],
        meta: [],
        checkoutToken: hooks.token,
        requestFingerprint: values.fingerprint,
        createdAt: now,
        updatedAt: now,
        expiresAt: new Date(now.getTime() + 60_000),
        deletedAt: null,
        amountRefunded: 0n,
      };
      assert.equal((await hooked.intents.insert(record)).inserted, true);
      assert.equal((await hooked.intents.insert({ ...record, id: `${hooks.intentId}2` })).inserted, false);
      const event = await hooked.events.findById(hooks.merchantId, hooks.eventId);
      assert.equal(event?.body, hooks.body);
      await hooked.events.list({ livemode: false, merchantId: hooks.merchantId, limit: 5, type: "payment_intent.created", paymentIntentId: hooks.intentId, after: { createdAt: now, id: hooks.eventId } });
      await hooked.events.headCursor(hooks.merchantId);
      await hooked.events.readAfter(hooks.merchantId, "0:0", 5, ["payment_intent.created"]);
      assert.match((await hooked.events.cursorAfter(hooks.merchantId, hooks.eventId)) ?? "", /^\d+:\d+$/);

      const [claimed] = await hooked.deliveryQueue.claim({ now, owner: hooks.owner, leaseMs: 60_000, limit: 5, perEndpointLimit: 5 });
      assert.equal(claimed?.body, hooks.body);
      await hooked.deliveryQueue.release([claimed!.lease]);
      const [again] = await hooked.deliveryQueue.claim({ now, owner: hooks.owner, leaseMs: 60_000, limit: 5, perEndpointLimit: 5 });
      await hooked.deliveryQueue.complete({
        lease: again!.lease,
        attempt: { at: now, statusCode: 500, durationMs: 7, error: `distinct error ${tag}` },
        next: { status: "pending", nextAttemptAt: new Date(now.getTime() + 5000) },
        endpoint: { kind: "failed", at: now, disableIfFailingSince: new Date(now.getTime() - 1) },
      });
      await hooked.deliveryQueue.stats(now);
      await hooked.endpoints.listDeliveries({ merchantId: hooks.merchantId, endpointId: hooks.endpointId, limit: 5, status: "failed", after: { createdAt: now, id: hooks.deliveryId } });
      await hooked.endpoints.redeliver({ merchantId: hooks.merchantId, eventId: hooks.eventId, at: now, deliveryId: () => `${hooks.deliveryId}r` });
      await hooked.endpoints.redeliver({ merchantId: hooks.merchantId, eventId: hooks.eventId, endpointId: hooks.endpointId, at: now, deliveryId: () => `${hooks.deliveryId}s` });
      await hooked.intents.transition(hooks.merchantId, hooks.intentId, { from: "pending", to: "successful", at: now, transaction: values.transaction });
      await hooked.intents.cancel(hooks.merchantId, hooks.intentId, now);
      await hooked.intents.expireDue(now, 5);
      assert.equal(await hooked.endpoints.delete(hooks.merchantId, hooks.endpointId, now), true);
    } finally {
      await hooked.close();
    }

    const texts = capture.statements.slice(from).map((s) => s.text);
    assert.ok(texts.length > 20, `captured ${texts.length} statements`);
    for (const value of [...Object.values(hooks), tag]) {
      const found = texts.find((text) => text.includes(value));
      assert.equal(found, undefined, `${JSON.stringify(value)} appears in: ${found}`);
    }
  });
});
