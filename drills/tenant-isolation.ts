import { Code, ConnectError, createClient, type Client, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { ApiKeyService } from "../gen/payments/v2/api_keys_pb.js";
import { EventService } from "../gen/payments/v2/events_pb.js";
import { PaymentIntentService } from "../gen/payments/v2/payment_intent_pb.js";
import { RefundService } from "../gen/payments/v2/refunds_pb.js";
import { SettlementAccountService } from "../gen/payments/v2/settlement_account_pb.js";
import { WebhookEndpointService } from "../gen/payments/v2/webhook_endpoints_pb.js";
import type { DrillTarget } from "./support/drill-target.js";

export interface TenantIsolationOptions {
  /** 404 timing samples per kind of id (victim's, random). */
  timingSamples: number;
  /** Largest difference of the two medians still "within noise": max(absolute, relative × the smaller median). */
  timingToleranceMs: number;
  timingToleranceRatio: number;
}

/** One attempt of the attacker and what it showed. */
export interface Attempt {
  name: string;
  ok: boolean;
  detail: string;
}

export interface TenantIsolationResult {
  attempts: Attempt[];
  /** Victim values found in an answer to a request that did not carry them. */
  leaks: string[];
  /** Whether every intent and account of the victim reads exactly as before. */
  victimUnchanged: boolean;
  victimChanges: string;
  timing: { victimMedianMs: number; randomMedianMs: number; samples: number; withinNoise: boolean };
  /** RPCs of the contract the drill does not try: must be empty. */
  uncoveredRpcs: string[];
  checkoutStatus?: { withKey: number; withoutKey: number };
  passed: boolean;
}

interface Reply {
  status: number;
  text: string;
  json: Record<string, unknown>;
}

const victimEmail = "victim.secret@example.com";
const victimAccount = { accountName: "Victim Secret Stores", accountNumber: "9876543210", bankName: "Victim Bank", bankCode: "044" };
const randomIntentId = () => `pi_${crypto.randomUUID().replace(/^(.{14})./, "$17")}`;
/** randomLike is an id of the same kind as id ("evt_…", "we_…"), a UUIDv7 nobody holds. */
const randomLike = (id: string) => `${id.slice(0, id.indexOf("_") + 1)}${crypto.randomUUID().replace(/^(.{14})./, "$17")}`;
const median = (values: number[]) => {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)]!;
};

/** The RPCs this drill tries, by "<service>/<method>". */
const coveredRpcs = new Set([
  "payments.v2.PaymentIntentService/CreatePaymentIntent",
  "payments.v2.PaymentIntentService/GetPaymentIntent",
  "payments.v2.PaymentIntentService/ListPaymentIntents",
  "payments.v2.PaymentIntentService/DeletePaymentIntent",
  "payments.v2.SettlementAccountService/CreateSettlementAccount",
  "payments.v2.SettlementAccountService/ListSettlementAccounts",
  "payments.v2.EventService/ListEvents",
  "payments.v2.EventService/GetEvent",
  "payments.v2.EventService/RedeliverEvent",
  "payments.v2.EventService/StreamEvents",
  "payments.v2.WebhookEndpointService/CreateWebhookEndpoint",
  "payments.v2.WebhookEndpointService/ListWebhookEndpoints",
  "payments.v2.WebhookEndpointService/DeleteWebhookEndpoint",
  "payments.v2.WebhookEndpointService/RotateWebhookEndpointSecret",
  "payments.v2.WebhookEndpointService/ListWebhookDeliveries",
  "payments.v2.RefundService/CreateRefund",
  "payments.v2.RefundService/ListRefunds",
  "payments.v2.RefundService/GetRefund",
  "payments.v2.ApiKeyService/CreateApiKey",
  "payments.v2.ApiKeyService/ListApiKeys",
  "payments.v2.ApiKeyService/RollApiKey",
  "payments.v2.ApiKeyService/RevokeApiKey",
]);

/** Scopes that read everything and write nothing: the drill's read-only key. */
const readOnlyScopes = ["payment_intents:read", "settlement_accounts:read", "refunds:read", "events:read", "webhooks:read", "api_keys:read"];

/**
 * runTenantIsolation: merchant a is the victim, merchant b the attacker. The
 * attacker tries every REST route and RPC (Connect JSON and gRPC) with the
 * victim's intent ids, client references, page token, settlement account and
 * checkout tokens, the victim's events and webhook endpoint (read,
 * redeliver, list deliveries, delete, rotate, resume a stream after), and
 * the victim's paid intent and its refund (refund it, list, read). Nothing
 * of the victim's may be read, changed or revealed:
 * every answer is what a random id would get, no answer carries a victim
 * value the request did not, the victim's data reads the same afterwards,
 * and a 404 for the victim's id takes as long as one for a random id.
 *
 * Modes and scopes (issue 23): the victim's own test key never lists, reads
 * or manages its live objects (a settlement account, a live API key), nor
 * makes a live key; a live key never reads its test intent; a read-only key
 * of the victim's is refused every write (403 naming the scope) and changes
 * nothing; and the attacker can neither list, roll nor revoke the victim's keys.
 */
export async function runTenantIsolation(target: DrillTarget, options: TenantIsolationOptions): Promise<TenantIsolationResult> {
  const { a: victim, b: attacker } = target.merchants;
  const rest = `${target.url}${target.basePath}`;
  const attempts: Attempt[] = [];
  const leaks: string[] = [];
  const secrets: string[] = [victimEmail, victimAccount.accountName, victimAccount.accountNumber];

  async function call(method: string, path: string, key: string | null, body?: unknown): Promise<Reply> {
    const res = await fetch(path.startsWith("http") ? path : `${rest}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // Pages answer HTML.
    }
    return { status: res.status, text, json };
  }

  /** attack sends a request as the attacker and scans the answer for victim values the request did not carry. */
  async function attack(method: string, path: string, body?: unknown): Promise<Reply> {
    const reply = await call(method, path, attacker.key, body);
    scan(`${method} ${path}`, `${path} ${JSON.stringify(body ?? "")}`, reply.text);
    return reply;
  }
  /** Everything the attacker has sent so far: a value it sent itself (its own copy of a bank account number) is not a leak. */
  let attackerSent = "";
  function scan(what: string, sent: string, received: string) {
    attackerSent += `\n${sent}`;
    for (const secret of secrets) if (received.includes(secret) && !attackerSent.includes(secret)) leaks.push(`${what} revealed ${secret}`);
  }
  const record = (name: string, ok: boolean, detail: string) => attempts.push({ name, ok, detail });
  const sameModulo = (x: unknown, y: unknown, xId: string, yId: string) =>
    String(x).replaceAll(xId, "<id>") === String(y).replaceAll(yId, "<id>");

  // The victim's data.
  const account = (await call("POST", "/v2/settlement-accounts", victim.key, victimAccount)).json as { id: string };
  const intents: { id: string; clientReference: string; checkoutLink: string }[] = [];
  for (let i = 1; i <= 3; i++) {
    const created = await call("POST", "/v2/payment-intents", victim.key, {
      amount: 10_000 * i,
      customerEmail: victimEmail,
      clientReference: `victim-order-${i}`,
      callbackUrl: "https://victim.example.com/paid",
      meta: [{ name: "victim_order", value: `V-${i}` }],
      ...(i === 1 ? { settlementAccounts: [{ settlementAccountId: account.id, splitAmount: 5000 }] } : {}),
    });
    if (created.status !== 201) throw new Error(`victim setup: HTTP ${created.status} ${created.text}`);
    intents.push(created.json as (typeof intents)[number]);
  }
  const victimPage = (await call("GET", "/v2/payment-intents?pageSize=1", victim.key)).json as { nextPageToken: string };
  const checkoutTokens = intents.map((intent) => intent.checkoutLink.slice(intent.checkoutLink.lastIndexOf("/") + 1));
  secrets.push(account.id, ...intents.map((i) => i.id), ...checkoutTokens, victimPage.nextPageToken);
  // The victim's second intent paid through its checkout page, and partly refunded.
  const paidIntent = intents[1]!;
  await payByCard(paidIntent.checkoutLink);
  const victimRefundReply = await call("POST", `/v2/payment-intents/${paidIntent.id}/refunds`, victim.key, { amount: 5000, clientReference: "victim-refund-1" });
  if (victimRefundReply.status !== 201) throw new Error(`victim setup: refund HTTP ${victimRefundReply.status} ${victimRefundReply.text}`);
  const victimRefund = victimRefundReply.json as { id: string };
  secrets.push(victimRefund.id);

  // The victim's webhook endpoint (a receiver that answers 204, on 127.0.0.1: the target allows private URLs)
  // registered before its intents' events, so it has deliveries; one more intent so there is one.
  const hook = createServer((req, res) => req.resume().on("end", () => res.writeHead(204).end()));
  await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", resolve));
  const hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/victim-secret-hook`;
  try {
    const endpointReply = await call("POST", "/v2/webhook-endpoints", victim.key, { url: hookUrl, description: "victim secret hook" });
    if (endpointReply.status !== 201) throw new Error(`victim setup: endpoint HTTP ${endpointReply.status} ${endpointReply.text}`);
    const endpoint = endpointReply.json as { id: string; secret: string };
    const lastIntent = await call("POST", "/v2/payment-intents", victim.key, { amount: 40_000, customerEmail: victimEmail, clientReference: "victim-order-4" });
    if (lastIntent.status !== 201) throw new Error(`victim setup: HTTP ${lastIntent.status} ${lastIntent.text}`);
    const victimEvents = ((await call("GET", "/v2/events?pageSize=100", victim.key)).json.events ?? []) as { id: string; data: { id: string } | null }[];
    const victimEvent = victimEvents.find((e) => e.data?.id === (lastIntent.json as { id: string }).id);
    if (!victimEvent) throw new Error(`victim setup: no event for ${String(lastIntent.json.id)} in ${JSON.stringify(victimEvents).slice(0, 200)}`);
    secrets.push(endpoint.id, endpoint.secret, hookUrl, (lastIntent.json as { id: string }).id, ...victimEvents.map((e) => e.id));
    const deliveriesPath = `/v2/webhook-endpoints/${endpoint.id}/deliveries`;
    // Deliveries settle first (the victim's receiver answers at once), so only the attacker could change them.
    for (let waited = 0; waited < 2000; waited += 100) {
      const listed = ((await call("GET", deliveriesPath, victim.key)).json.deliveries ?? []) as { status: string }[];
      if (listed.length > 0 && listed.every((d) => d.status !== "pending")) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    // Modes and scopes: the victim's live objects and a read-only key.
    const liveKey = victim.liveKey;
    const liveAccount = liveKey ? (await call("POST", "/v2/settlement-accounts", liveKey, { ...victimAccount, accountNumber: "9876543211" })).json as { id: string } : undefined;
    const liveApiKey = liveKey ? (await call("POST", "/v2/api-keys", liveKey, { name: "victim live" })).json as { id: string; secret: string } : undefined;
    const readOnlyReply = await call("POST", "/v2/api-keys", victim.key, { name: "victim read-only", scopes: readOnlyScopes });
    if (readOnlyReply.status !== 201) throw new Error(`victim setup: api key HTTP ${readOnlyReply.status} ${readOnlyReply.text}`);
    const readOnly = readOnlyReply.json as { id: string; secret: string };
    secrets.push(readOnly.id, readOnly.secret, ...(liveApiKey ? [liveApiKey.id, liveApiKey.secret] : []));
    /** The victim's keys as its test key lists them, without lastUsedAt (which every use moves). */
    const victimKeys = async () =>
      (((await call("GET", "/v2/api-keys", victim.key)).json.apiKeys ?? []) as Record<string, unknown>[]).map(({ lastUsedAt: _, ...key }) => key);

    const snapshot = async () =>
      JSON.stringify([
        await victimKeys(),
        (await call("GET", "/v2/payment-intents?pageSize=100", victim.key)).json,
        (await call("GET", "/v2/settlement-accounts", victim.key)).json,
        ...(await Promise.all(intents.map(async (i) => (await call("GET", `/v2/payment-intents/${i.id}`, victim.key)).json))),
        (await call("GET", "/v2/events?pageSize=100", victim.key)).json,
        (await call("GET", "/v2/webhook-endpoints", victim.key)).json,
        (await call("GET", deliveriesPath, victim.key)).json,
        (await call("GET", `/v2/payment-intents/${paidIntent.id}/refunds`, victim.key)).json,
        (await call("GET", `/v2/refunds/${victimRefund.id}`, victim.key)).json,
      ]);
    const before = await snapshot();

    // The attacker's own intent, so its lists are not trivially empty.
    const own = await attack("POST", "/v2/payment-intents", { amount: 500, customerEmail: "attacker@example.com", clientReference: "attacker-own-1" });
    const [v1] = intents as [(typeof intents)[number]];
    const randomId = randomIntentId();

    // REST: read and delete by id, as a random id would answer.
    for (const method of ["GET", "DELETE"]) {
      const foreign = await attack(method, `/v2/payment-intents/${v1.id}`);
      const unknown = await attack(method, `/v2/payment-intents/${randomId}`);
      record(
        `REST ${method} /v2/payment-intents/{victim id}`,
        foreign.status === 404 && unknown.status === 404 && sameModulo(foreign.json.message, unknown.json.message, v1.id, randomId),
        `${foreign.status} ${foreign.json.message}; random id: ${unknown.status}`,
      );
    }
    for (const token of checkoutTokens.slice(0, 1)) {
      const byToken = await attack("GET", `/v2/payment-intents/${token}`);
      record("REST GET /v2/payment-intents/{victim checkout token}", byToken.status === 404, `${byToken.status} ${byToken.json.message}`);
    }
    const byReference = await attack("GET", `/v2/payment-intents?clientReference=${v1.clientReference}`);
    record(
      "REST list ?clientReference={victim reference}",
      byReference.status === 200 && JSON.stringify(byReference.json) === '{"paymentIntents":[]}',
      `${byReference.status} ${byReference.text.slice(0, 80)}`,
    );
    const byMeta = await attack("GET", "/v2/payment-intents?meta[victim_order]=V-1");
    record(
      "REST list ?meta[victim_order]={victim's meta value}",
      byMeta.status === 200 && JSON.stringify(byMeta.json) === '{"paymentIntents":[]}',
      `${byMeta.status} ${byMeta.text.slice(0, 80)}`,
    );
    const withToken = await attack("GET", `/v2/payment-intents?pageSize=1&pageToken=${encodeURIComponent(victimPage.nextPageToken)}`);
    const forged = await attack("GET", `/v2/payment-intents?pageSize=1&pageToken=${encodeURIComponent(`${victimPage.nextPageToken.slice(0, -2)}AA`)}`);
    record(
      "REST list ?pageToken={victim page token}",
      withToken.status === 400 && withToken.json.message === forged.json.message,
      `${withToken.status} ${withToken.json.message}; forged token: ${forged.status}`,
    );
    const attackerList = await attack("GET", "/v2/payment-intents?pageSize=100");
    const listed = ((attackerList.json.paymentIntents ?? []) as { id: string }[]).map((i) => i.id);
    record("REST list (no filter)", attackerList.status === 200 && listed.join() === String(own.json.id), `lists ${listed.length} intent(s), its own`);
    const sameReference = await attack("POST", "/v2/payment-intents", { amount: 700, customerEmail: "attacker@example.com", clientReference: v1.clientReference });
    record(
      "REST create with the victim's clientReference",
      sameReference.status === 201,
      `${sameReference.status}: a reference is per merchant, so the victim's use of it is neither reported (409) nor replayed (200)`,
    );
    const randomAccount = `sa_${crypto.randomUUID()}`;
    const splitBody = (id: string) => ({
      amount: 900,
      customerEmail: "attacker@example.com",
      clientReference: `attacker-split-${id.slice(-6)}`,
      settlementAccounts: [{ settlementAccountId: id, splitAmount: 100 }],
    });
    const foreignSplit = await attack("POST", "/v2/payment-intents", splitBody(account.id));
    const unknownSplit = await attack("POST", "/v2/payment-intents", splitBody(randomAccount));
    record(
      "REST create with a split to the victim's settlement account",
      foreignSplit.status === 400 && sameModulo(foreignSplit.json.message, unknownSplit.json.message, account.id, randomAccount),
      `${foreignSplit.status} ${foreignSplit.json.message}`,
    );
    const sameBankAccount = await attack("POST", "/v2/settlement-accounts", { ...victimAccount, accountName: "Attacker Ltd", bankName: "Attacker Bank" });
    record(
      "REST register the victim's bank account number",
      sameBankAccount.status === 201,
      `${sameBankAccount.status}: registered as the attacker's own, without naming the victim's (409 would)`,
    );
    const accounts = await attack("GET", "/v2/settlement-accounts");
    const accountIds = ((accounts.json.settlementAccounts ?? []) as { id: string }[]).map((x) => x.id);
    record("REST list settlement accounts", !accountIds.includes(account.id), `lists ${accountIds.length} account(s), its own`);

    // REST: the victim's event and endpoint, as a random id of the same kind would answer.
    const ownEvents = ((await attack("GET", "/v2/events")).json.events ?? []) as { id: string }[];
    const randomEvent = randomLike(victimEvent.id);
    const randomEndpoint = randomLike(endpoint.id);
    for (const [name, method, path, body, victimId, randomOf] of [
      ["GET /v2/events/{victim event}", "GET", (id: string) => `/v2/events/${id}`, undefined, victimEvent.id, randomEvent],
      ["POST /v2/events/{victim event}/redeliver", "POST", (id: string) => `/v2/events/${id}/redeliver`, {}, victimEvent.id, randomEvent],
      ["GET /v2/webhook-endpoints/{victim endpoint}/deliveries", "GET", (id: string) => `/v2/webhook-endpoints/${id}/deliveries`, undefined, endpoint.id, randomEndpoint],
      ["POST /v2/webhook-endpoints/{victim endpoint}/rotate-secret", "POST", (id: string) => `/v2/webhook-endpoints/${id}/rotate-secret`, {}, endpoint.id, randomEndpoint],
      ["DELETE /v2/webhook-endpoints/{victim endpoint}", "DELETE", (id: string) => `/v2/webhook-endpoints/${id}`, undefined, endpoint.id, randomEndpoint],
    ] as const) {
      const foreign = await attack(method, path(victimId), body);
      const unknown = await attack(method, path(randomOf), body);
      record(
        `REST ${name}`,
        foreign.status === 404 && unknown.status === 404 && sameModulo(foreign.json.message, unknown.json.message, victimId, randomOf),
        `${foreign.status} ${foreign.json.message}; random id: ${unknown.status}`,
      );
    }
    if (ownEvents[0]) {
      const toVictim = await attack("POST", `/v2/events/${ownEvents[0].id}/redeliver`, { webhookEndpointId: endpoint.id });
      const toRandom = await attack("POST", `/v2/events/${ownEvents[0].id}/redeliver`, { webhookEndpointId: randomEndpoint });
      record(
        "REST POST /v2/events/{own event}/redeliver to the victim's endpoint",
        toVictim.status === 404 && toRandom.status === 404 && sameModulo(toVictim.json.message, toRandom.json.message, endpoint.id, randomEndpoint),
        `${toVictim.status} ${toVictim.json.message}; random endpoint: ${toRandom.status}`,
      );
    } else {
      record("REST POST /v2/events/{own event}/redeliver to the victim's endpoint", false, "the attacker has no event of its own to try it with");
    }
    const eventsOfVictimIntent = await attack("GET", `/v2/events?paymentIntentId=${v1.id}`);
    record(
      "REST list events ?paymentIntentId={victim id}",
      eventsOfVictimIntent.status === 200 && JSON.stringify(eventsOfVictimIntent.json.events ?? []) === "[]",
      `${eventsOfVictimIntent.status} ${eventsOfVictimIntent.text.slice(0, 80)}`,
    );
    record("REST list events (no filter)", ownEvents.length > 0 && !ownEvents.some((e) => victimEvents.some((v) => v.id === e.id)), `lists ${ownEvents.length} event(s), its own`);
    // REST: the victim's paid intent and its refund, as random ids of the same kind would answer.
    const randomRefund = randomLike(victimRefund.id);
    for (const [name, method, path, body, victimId, randomOf] of [
      ["POST /v2/payment-intents/{victim paid id}/refunds", "POST", (id: string) => `/v2/payment-intents/${id}/refunds`, { clientReference: "attacker-refund-1" }, paidIntent.id, randomId],
      ["GET /v2/payment-intents/{victim paid id}/refunds", "GET", (id: string) => `/v2/payment-intents/${id}/refunds`, undefined, paidIntent.id, randomId],
      ["GET /v2/refunds/{victim refund}", "GET", (id: string) => `/v2/refunds/${id}`, undefined, victimRefund.id, randomRefund],
    ] as const) {
      const foreign = await attack(method, path(victimId), body);
      const unknown = await attack(method, path(randomOf), body);
      record(
        `REST ${name}`,
        foreign.status === 404 && unknown.status === 404 && sameModulo(foreign.json.message, unknown.json.message, victimId, randomOf),
        `${foreign.status} ${foreign.json.message}; random id: ${unknown.status}`,
      );
    }
    const refundSameReference = await attack("POST", `/v2/payment-intents/${String(own.json.id)}/refunds`, { clientReference: "victim-refund-1" });
    record(
      "REST refund of its own intent with the victim's refund reference",
      refundSameReference.status === 409 && /is pending/.test(String(refundSameReference.json.message)),
      `${refundSameReference.status} ${refundSameReference.json.message}: judged on the attacker's own intent, the victim's refund neither reported nor replayed`,
    );

    const endpointsList = await attack("GET", "/v2/webhook-endpoints");
    record(
      "REST list webhook endpoints",
      endpointsList.status === 200 && !endpointsList.text.includes(endpoint.id),
      `${endpointsList.status}, lists ${((endpointsList.json.webhookEndpoints ?? []) as unknown[]).length} endpoint(s)`,
    );

    // RPC, over Connect JSON and over gRPC: the same attempts.
    const transports: [string, Transport][] = [
      ["Connect JSON", createConnectTransport({ baseUrl: target.url, httpVersion: "1.1", useBinaryFormat: false })],
      ["gRPC", createGrpcTransport({ baseUrl: target.url })],
    ];
    const headers = { authorization: `Bearer ${attacker.key}` };
    for (const [protocol, transport] of transports) {
      const intentsRpc: Client<typeof PaymentIntentService> = createClient(PaymentIntentService, transport);
      const accountsRpc: Client<typeof SettlementAccountService> = createClient(SettlementAccountService, transport);
      const eventsRpc: Client<typeof EventService> = createClient(EventService, transport);
      const endpointsRpc: Client<typeof WebhookEndpointService> = createClient(WebhookEndpointService, transport);
      const refundsRpc: Client<typeof RefundService> = createClient(RefundService, transport);
      const keysRpc: Client<typeof ApiKeyService> = createClient(ApiKeyService, transport);
      /** outcome runs one call; `what` names it and carries every value the request sent. */
      const outcome = async (what: string, run: () => Promise<unknown>): Promise<{ code: Code | "OK"; message: string; text: string }> => {
        try {
          const value = await run();
          const text = JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
          scan(`${protocol} ${what}`, what, text);
          return { code: "OK", message: "", text };
        } catch (error) {
          const e = ConnectError.from(error);
          scan(`${protocol} ${what}`, what, e.rawMessage);
          return { code: e.code, message: e.rawMessage, text: e.rawMessage };
        }
      };
      for (const [name, run] of [
        ["GetPaymentIntent", (id: string) => intentsRpc.getPaymentIntent({ id }, { headers })],
        ["DeletePaymentIntent", (id: string) => intentsRpc.deletePaymentIntent({ id }, { headers })],
      ] as const) {
        const foreign = await outcome(`${name} ${v1.id}`, () => run(v1.id));
        const unknown = await outcome(`${name} ${randomId}`, () => run(randomId));
        record(
          `${protocol} ${name}({victim id})`,
          foreign.code === Code.NotFound && sameModulo(foreign.message, unknown.message, v1.id, randomId),
          `${Code[foreign.code as Code] ?? foreign.code}: ${foreign.message}`,
        );
      }
      const listByRef = await outcome(`ListPaymentIntents ${v1.clientReference}`, () =>
        intentsRpc.listPaymentIntents({ clientReference: v1.clientReference }, { headers }),
      );
      record(`${protocol} ListPaymentIntents({victim reference})`, listByRef.code === "OK" && !listByRef.text.includes(v1.id), listByRef.text.slice(0, 80));
      const listByMeta = await outcome("ListPaymentIntents meta", () =>
        intentsRpc.listPaymentIntents({ meta: [{ name: "victim_order", value: "V-1" }] }, { headers }),
      );
      record(`${protocol} ListPaymentIntents({victim meta})`, listByMeta.code === "OK" && !listByMeta.text.includes(v1.id), listByMeta.text.slice(0, 80));
      const listByToken = await outcome(`ListPaymentIntents ${victimPage.nextPageToken}`, () =>
        intentsRpc.listPaymentIntents({ pageSize: 1, pageToken: victimPage.nextPageToken }, { headers }),
      );
      record(`${protocol} ListPaymentIntents({victim page token})`, listByToken.code === Code.InvalidArgument, `${Code[listByToken.code as Code]}: ${listByToken.message}`);
      const createRef = await outcome(`CreatePaymentIntent ${v1.clientReference}`, () =>
        intentsRpc.createPaymentIntent(
          { amount: 800n, customerEmail: "attacker@example.com", clientReference: `${v1.clientReference}-${protocol.length}` },
          { headers },
        ),
      );
      const createSameRef = await outcome(`CreatePaymentIntent ${v1.clientReference}`, () =>
        intentsRpc.createPaymentIntent({ amount: 700n, customerEmail: "attacker@example.com", clientReference: v1.clientReference }, { headers }),
      );
      record(
        `${protocol} CreatePaymentIntent({victim reference})`,
        createRef.code === "OK" && createSameRef.code === "OK",
        "created in the attacker's own namespace (an identical replay of the attacker's earlier create)",
      );
      const createSplit = await outcome(`CreatePaymentIntent ${account.id}`, () =>
        intentsRpc.createPaymentIntent(
          {
            amount: 900n,
            customerEmail: "attacker@example.com",
            clientReference: `rpc-split-${protocol.length}`,
            settlementAccounts: [{ settlementAccountId: account.id, splitAmount: 100n }],
          },
          { headers },
        ),
      );
      record(`${protocol} CreatePaymentIntent(split to the victim's account)`, createSplit.code === Code.InvalidArgument, `${Code[createSplit.code as Code]}: ${createSplit.message}`);
      const createAccount = await outcome(`CreateSettlementAccount ${JSON.stringify(victimAccount)}`, () =>
        accountsRpc.createSettlementAccount({ ...victimAccount, accountName: "Attacker Ltd", bankName: "Attacker Bank" }, { headers }),
      );
      record(
        `${protocol} CreateSettlementAccount(victim's bank account number)`,
        createAccount.code === "OK" || (createAccount.code === Code.AlreadyExists && !createAccount.message.includes(account.id)),
        createAccount.code === "OK" ? "registered as the attacker's own" : createAccount.message,
      );
      for (const [name, run] of [
        ["RevokeApiKey", (id: string) => keysRpc.revokeApiKey({ id }, { headers })],
        ["RollApiKey", (id: string) => keysRpc.rollApiKey({ id }, { headers })],
      ] as const) {
        const randomKey = randomLike(readOnly.id);
        const foreign = await outcome(`${name} ${readOnly.id}`, () => run(readOnly.id));
        const unknown = await outcome(`${name} ${randomKey}`, () => run(randomKey));
        record(
          `${protocol} ${name}({victim key})`,
          foreign.code === Code.NotFound && sameModulo(foreign.message, unknown.message, readOnly.id, randomKey),
          `${Code[foreign.code as Code] ?? foreign.code}: ${foreign.message}`,
        );
      }
      const listKeys = await outcome("ListApiKeys", () => keysRpc.listApiKeys({}, { headers }));
      record(`${protocol} ListApiKeys`, listKeys.code === "OK" && !listKeys.text.includes(readOnly.id), "only the attacker's own");
      const ownKey = await outcome("CreateApiKey", () => keysRpc.createApiKey({ name: `attacker ${protocol}`, scopes: ["payment_intents:read"] }, { headers }));
      record(`${protocol} CreateApiKey`, ownKey.code === "OK" && !ownKey.text.includes(victim.id), "made in the attacker's own namespace");
      const listAccounts = await outcome("ListSettlementAccounts", () => accountsRpc.listSettlementAccounts({}, { headers }));
      record(`${protocol} ListSettlementAccounts`, listAccounts.code === "OK" && !listAccounts.text.includes(account.id), "only the attacker's own");

      for (const [name, run, victimId, randomOf] of [
        ["GetEvent", (id: string) => eventsRpc.getEvent({ id }, { headers }), victimEvent.id, randomEvent],
        ["RedeliverEvent", (id: string) => eventsRpc.redeliverEvent({ id }, { headers }), victimEvent.id, randomEvent],
        ["ListWebhookDeliveries", (id: string) => endpointsRpc.listWebhookDeliveries({ id }, { headers }), endpoint.id, randomEndpoint],
        ["RotateWebhookEndpointSecret", (id: string) => endpointsRpc.rotateWebhookEndpointSecret({ id }, { headers }), endpoint.id, randomEndpoint],
        ["DeleteWebhookEndpoint", (id: string) => endpointsRpc.deleteWebhookEndpoint({ id }, { headers }), endpoint.id, randomEndpoint],
        ["StreamEvents(afterEventId)", (id: string) => firstOfStream(eventsRpc.streamEvents({ afterEventId: id }, { headers, signal: AbortSignal.timeout(3000) })), victimEvent.id, randomEvent],
        ["CreateRefund", (id: string) => refundsRpc.createRefund({ paymentIntentId: id, clientReference: `attacker-rpc-${protocol.length}` }, { headers }), paidIntent.id, randomId],
        ["ListRefunds", (id: string) => refundsRpc.listRefunds({ paymentIntentId: id }, { headers }), paidIntent.id, randomId],
        ["GetRefund", (id: string) => refundsRpc.getRefund({ id }, { headers }), victimRefund.id, randomRefund],
      ] as const) {
        const foreign = await outcome(`${name} ${victimId}`, () => run(victimId));
        const unknown = await outcome(`${name} ${randomOf}`, () => run(randomOf));
        record(
          `${protocol} ${name}({victim id})`,
          foreign.code === Code.NotFound && unknown.code === Code.NotFound && sameModulo(foreign.message, unknown.message, victimId, randomOf),
          `${Code[foreign.code as Code] ?? foreign.code}: ${foreign.message}; random id: ${Code[unknown.code as Code] ?? unknown.code}`,
        );
      }
      if (ownEvents[0]) {
        const toVictim = await outcome(`RedeliverEvent ${ownEvents[0].id} ${endpoint.id}`, () =>
          eventsRpc.redeliverEvent({ id: ownEvents[0]!.id, webhookEndpointId: endpoint.id }, { headers }),
        );
        record(`${protocol} RedeliverEvent(own event, victim's endpoint)`, toVictim.code === Code.NotFound, `${Code[toVictim.code as Code] ?? toVictim.code}: ${toVictim.message}`);
      }
      const listEvents = await outcome(`ListEvents ${v1.id}`, () => eventsRpc.listEvents({ paymentIntentId: v1.id }, { headers }));
      record(`${protocol} ListEvents({victim intent id})`, listEvents.code === "OK" && !victimEvents.some((e) => listEvents.text.includes(e.id)), listEvents.text.slice(0, 80));
      const listEndpoints = await outcome("ListWebhookEndpoints", () => endpointsRpc.listWebhookEndpoints({}, { headers }));
      record(`${protocol} ListWebhookEndpoints`, listEndpoints.code === "OK" && !listEndpoints.text.includes(endpoint.id), "only the attacker's own");
      // The attacker's own endpoint at the victim's URL: its own, the victim's stays as it was.
      const createEndpoint = await outcome(`CreateWebhookEndpoint ${hookUrl}`, () => endpointsRpc.createWebhookEndpoint({ url: hookUrl }, { headers }));
      record(
        `${protocol} CreateWebhookEndpoint(victim's URL)`,
        createEndpoint.code === "OK" && !createEndpoint.text.includes(endpoint.id) && !createEndpoint.text.includes(endpoint.secret),
        createEndpoint.code === "OK" ? "registered as the attacker's own, with a secret of its own" : createEndpoint.message,
      );
    }

    // The checkout page is the customer's capability: the link alone opens it,
    // and the attacker's key changes nothing.
    let checkoutStatus: TenantIsolationResult["checkoutStatus"];
    const page = await call("GET", `${target.url}/checkout/${checkoutTokens[0]}`, attacker.key);
    if (page.status !== 404 || page.json.message === undefined || !/no route/.test(String(page.json.message))) {
      const anonymous = await call("GET", `${target.url}/checkout/${checkoutTokens[0]}`, null);
      const unknownPage = await call("GET", `${target.url}/checkout/${Buffer.alloc(32, 7).toString("base64url")}`, attacker.key);
      checkoutStatus = { withKey: page.status, withoutKey: anonymous.status };
      record(
        "GET /checkout/{victim token} with the attacker's key",
        page.status === anonymous.status && unknownPage.status === 404,
        `${page.status} with the key, ${anonymous.status} without (the link is the customer's capability; the key adds nothing); unknown token ${unknownPage.status}`,
      );
    }

    // Modes: the victim's own test key against its live objects, and the reverse.
    if (liveKey && liveAccount && liveApiKey) {
      const accounts = await call("GET", "/v2/settlement-accounts", victim.key);
      record("test key: ListSettlementAccounts (victim's live account)", accounts.status === 200 && !accounts.text.includes(liveAccount.id), `${accounts.status}`);
      const keysListed = await call("GET", "/v2/api-keys", victim.key);
      record("test key: ListApiKeys (victim's live key)", keysListed.status === 200 && !keysListed.text.includes(liveApiKey.id), `${keysListed.status}`);
      for (const [method, path] of [["DELETE", `/v2/api-keys/${liveApiKey.id}`], ["POST", `/v2/api-keys/${liveApiKey.id}/roll`]] as const) {
        const reply = await call(method, path, victim.key, method === "POST" ? {} : undefined);
        record(`test key: ${method} ${path.replace(liveApiKey.id, "{live key}")}`, reply.status === 404 && /exists in live mode/.test(String(reply.json.message)), `${reply.status}: ${String(reply.json.message)}`);
      }
      const mint = await call("POST", "/v2/api-keys", victim.key, { name: "escalate", mode: "live" });
      record("test key: CreateApiKey(mode live)", mint.status === 403, `${mint.status}: ${String(mint.json.message)}`);
      const stillLive = await call("GET", "/v2/api-keys", liveApiKey.secret);
      record("the live key still works after the test key's attempts", stillLive.status === 200, `${stillLive.status}`);
      const testIntentByLive = await call("GET", `/v2/payment-intents/${v1.id}`, liveKey);
      record("live key: GetPaymentIntent(victim's test intent)", testIntentByLive.status === 404 && /exists in test mode/.test(String(testIntentByLive.json.message)), `${testIntentByLive.status}`);
      const liveIntent = await call("POST", "/v2/payment-intents", liveKey, { amount: 1000, customerEmail: victimEmail, clientReference: "victim-live-1" });
      // A live intent needs a live processor; where the target has none (400), there is no live intent to hide.
      if (liveIntent.status === 201) {
        const liveId = String(liveIntent.json.id);
        const byTest = await call("GET", `/v2/payment-intents/${liveId}`, victim.key);
        const listByTest = await call("GET", "/v2/payment-intents?clientReference=victim-live-1", victim.key);
        record("test key: GetPaymentIntent / ListPaymentIntents (victim's live intent)", byTest.status === 404 && !listByTest.text.includes(liveId), `${byTest.status}, ${listByTest.status}`);
      }
    } else {
      record("modes: the target gives the victim a live key", false, "no liveKey for merchant a");
    }

    // Scopes: the victim's read-only key reads, and every write is refused naming its scope.
    const readOk = await call("GET", "/v2/payment-intents", readOnly.secret);
    record("read-only key: ListPaymentIntents", readOk.status === 200, `${readOk.status}`);
    for (const [method, path, body, scope] of [
      ["POST", "/v2/payment-intents", { amount: 100, customerEmail: victimEmail, clientReference: "read-only-1" }, "payment_intents:write"],
      ["DELETE", `/v2/payment-intents/${v1.id}`, undefined, "payment_intents:write"],
      ["POST", "/v2/settlement-accounts", { ...victimAccount, accountNumber: "1111111111" }, "settlement_accounts:write"],
      ["POST", "/v2/webhook-endpoints", { url: hookUrl }, "webhooks:write"],
      ["DELETE", `/v2/webhook-endpoints/${endpoint.id}`, undefined, "webhooks:write"],
      ["POST", `/v2/events/${victimEvent.id}/redeliver`, {}, "webhooks:write"],
      ["POST", `/v2/payment-intents/${paidIntent.id}/refunds`, { amount: 100, clientReference: "read-only-rf" }, "refunds:write"],
      ["POST", "/v2/api-keys", { name: "wider" }, "api_keys:write"],
      ["DELETE", `/v2/api-keys/${readOnly.id}`, undefined, "api_keys:write"],
    ] as const) {
      const reply = await call(method, path, readOnly.secret, body);
      record(`read-only key: ${method} ${path.replace(/\/(pi|we|evt|key)_[^/]+/, "/{id}")}`, reply.status === 403 && reply.json.message === `this API key lacks the scope ${scope}`, `${reply.status}: ${String(reply.json.message)}`);
    }

    // The attacker against the victim's keys: what a random key id gets, and never in its list.
    const randomKey = randomLike(readOnly.id);
    for (const [method, suffix] of [["DELETE", ""], ["POST", "/roll"]] as const) {
      const foreign = await attack(method, `/v2/api-keys/${readOnly.id}${suffix}`, method === "POST" ? {} : undefined);
      const unknown = await attack(method, `/v2/api-keys/${randomKey}${suffix}`, method === "POST" ? {} : undefined);
      record(
        `${method} /v2/api-keys/{victim key}${suffix}`,
        foreign.status === 404 && unknown.status === 404 && sameModulo(foreign.json.message, unknown.json.message, readOnly.id, randomKey),
        `${foreign.status}: ${String(foreign.json.message)}`,
      );
    }
    const attackerKeys = await attack("GET", "/v2/api-keys");
    record("GET /v2/api-keys (attacker)", attackerKeys.status === 200 && !attackerKeys.text.includes(readOnly.id), `${attackerKeys.status}`);

    // 404 timing: the victim's id against random ids, interleaved.
    const victimTimes: number[] = [];
    const randomTimes: number[] = [];
    const timeGet = async (id: string) => {
      const started = performance.now();
      const res = await fetch(`${rest}/v2/payment-intents/${id}`, { headers: { authorization: `Bearer ${attacker.key}` } });
      await res.arrayBuffer();
      return performance.now() - started;
    };
    for (let i = 0; i < 20; i++) await timeGet(i % 2 ? v1.id : randomIntentId());
    for (let i = 0; i < options.timingSamples; i++) {
      victimTimes.push(await timeGet(intents[i % intents.length]!.id));
      randomTimes.push(await timeGet(randomIntentId()));
    }
    const victimMedianMs = median(victimTimes);
    const randomMedianMs = median(randomTimes);
    const tolerance = Math.max(options.timingToleranceMs, options.timingToleranceRatio * Math.min(victimMedianMs, randomMedianMs));
    const timing = {
      victimMedianMs,
      randomMedianMs,
      samples: options.timingSamples,
      withinNoise: Math.abs(victimMedianMs - randomMedianMs) <= tolerance,
    };

    const after = await snapshot();
    const uncoveredRpcs = [PaymentIntentService, SettlementAccountService, EventService, WebhookEndpointService, RefundService, ApiKeyService]
      .flatMap((service) => service.methods.map((m) => `${service.typeName}/${m.name}`))
      .filter((name) => !coveredRpcs.has(name));
    const passed =
      attempts.every((x) => x.ok) && leaks.length === 0 && before === after && timing.withinNoise && uncoveredRpcs.length === 0;
    return {
      attempts,
      leaks,
      victimUnchanged: before === after,
      victimChanges: before === after ? "" : `before: ${before.slice(0, 400)}\nafter: ${after.slice(0, 400)}`,
      timing,
      uncoveredRpcs,
      checkoutStatus,
      passed,
    };
  } finally {
    hook.closeAllConnections();
    await new Promise((resolve) => hook.close(resolve));
  }
}

/**
 * payByCard pays an intent through its checkout page as a browser does: the
 * page's CSRF cookie and field, then the card form with the test card that
 * succeeds.
 */
async function payByCard(checkoutLink: string): Promise<void> {
  const page = await fetch(checkoutLink);
  const html = await page.text();
  const cookie = (page.headers.get("set-cookie") ?? "").split(";")[0]!;
  const csrf = /<input type="hidden" name="csrf" value="([^"]*)"/.exec(html)?.[1];
  if (!csrf || !cookie) throw new Error(`victim setup: the checkout page of ${checkoutLink} has no form (HTTP ${page.status})`);
  const form = { csrf, method: "card", card_number: "4084 0840 8408 4081", card_expiry: "12/39", card_cvv: "123" };
  const paid = await fetch(`${checkoutLink}/pay`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    body: new URLSearchParams(form).toString(),
    redirect: "manual",
  });
  await paid.arrayBuffer();
  if (paid.status !== 303 && paid.status !== 200) throw new Error(`victim setup: paying ${checkoutLink} answered ${paid.status}`);
}

/** firstOfStream reads a server stream's first message (or its error): a stream that accepted the cursor waits, and times out. */
async function firstOfStream(stream: AsyncIterable<unknown>): Promise<unknown> {
  for await (const message of stream) return message;
  return undefined;
}

/** describeTenantIsolation is the drill's report. */
export function describeTenantIsolation(result: TenantIsolationResult): string[] {
  const t = result.timing;
  return [
    `${result.attempts.length} attempts by the attacker over REST, Connect JSON and gRPC${result.checkoutStatus ? " and the checkout page" : ""}: ${result.attempts.filter((x) => x.ok).length} held`,
    ...result.attempts.filter((x) => !x.ok).map((x) => `FAILED ${x.name}: ${x.detail}`),
    ...(result.checkoutStatus
      ? [`GET /checkout/{victim token}: ${result.checkoutStatus.withKey} with the attacker's key, ${result.checkoutStatus.withoutKey} without (a capability link: the key adds nothing)`]
      : []),
    `victim values revealed: ${result.leaks.length}${result.leaks.length ? ` (${result.leaks.slice(0, 3).join("; ")})` : ""}; victim's data ${result.victimUnchanged ? "unchanged" : "CHANGED"}`,
    `404 timing over ${t.samples} requests each: victim's id median ${t.victimMedianMs.toFixed(3)} ms, random id ${t.randomMedianMs.toFixed(3)} ms (${t.withinNoise ? "within noise" : "OUTSIDE noise"})`,
    ...(result.uncoveredRpcs.length ? [`RPCs the drill does not try yet: ${result.uncoveredRpcs.join(", ")}`] : []),
  ];
}
