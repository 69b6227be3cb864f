import { STATUS_CODES } from "node:http";
import fc from "fast-check";
import { eventTypes } from "../src/domain/event.js";
import type { DrillTarget } from "./support/drill-target.js";
import { sendRaw, type RawRequest, type RawResponse } from "./support/raw-http.js";

/** The kinds of hostile input, each its own fast-check property. */
export const fuzzKinds = ["rest-bodies", "query-strings", "paths", "headers", "connect-json"] as const;
export type FuzzKind = (typeof fuzzKinds)[number];

export interface HostileInputOptions {
  /** Cases per kind. */
  runs: Record<FuzzKind, number>;
  /** fast-check seed, printed so a failure can be replayed. */
  seed?: number;
}

export interface KindResult {
  kind: FuzzKind;
  runs: number;
  /** The shrunk failing case and why it failed, when the property failed. */
  failure?: string;
  /** Answers seen, by HTTP status. */
  statuses: Record<number, number>;
}

export interface HostileInputResult {
  seed: number;
  kinds: KindResult[];
  /** Creates (intents and accounts) answered 2xx during the run. */
  acceptedIntents: number;
  acceptedAccounts: number;
  /** Webhook endpoints answered 2xx during the run. */
  acceptedEndpoints: number;
  /** Stored but never answered 2xx: must be empty. */
  storedButRejected: string[];
  /** Rows of the merchant that sent no request: must be empty. */
  strayRows: string[];
  alive: boolean;
  passed: boolean;
}

/** Plain HTTP endpoints that answer HTML or text, not the REST error shape. */
const nonRestPrefixes = ["/checkout", "/healthz", "/readyz", "/metrics"];
/** RPC paths: served by connect-node in the Connect/gRPC error shapes. */
const isRpcPath = (path: string) => /^\/(payments\.v2|grpc\.)[^/]*\//.test(path);

const framingHeaders = new Set(["content-length", "transfer-encoding", "host", "connection", "expect", "upgrade", "te", "trailer"]);

/**
 * percentEncode writes text as UTF-8 with everything but unreserved
 * characters percent-encoded (RFC 3986 §2.1). Unlike encodeURIComponent it
 * never throws: a lone surrogate becomes U+FFFD, as it would on the wire.
 */
function percentEncode(text: string): string {
  let out = "";
  for (const byte of Buffer.from(text, "utf8")) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** A JSON value of any shape, a little deep. */
const anyJson = fc.jsonValue({ maxDepth: 3 });

const amount = fc.oneof(
  { weight: 5, arbitrary: fc.integer({ min: 1, max: 10_000_000 }) },
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -1, 1e12, 1e12 + 1, 2 ** 53 + 1, 1e300, -0),
  fc.string(),
  fc.boolean(),
  anyJson,
);
const email = fc.oneof({ weight: 4, arbitrary: fc.emailAddress() }, fc.string({ maxLength: 300 }), anyJson);
const reference = fc.oneof(
  { weight: 5, arbitrary: fc.stringMatching(/^[A-Za-z0-9._:-]{1,24}$/) },
  fc.string({ maxLength: 120, unit: "binary" }),
  anyJson,
);
const methodName = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("card", "bank_transfer", "ussd", "paystack") },
  fc.string(),
  fc.record({ type: fc.oneof(fc.constantFrom("card", "ussd"), fc.string()) }),
  anyJson,
);
const url = fc.oneof({ weight: 3, arbitrary: fc.webUrl() }, fc.string({ unit: "binary" }), fc.constant("javascript:alert(1)"), anyJson);

/** A valid create body, optional fields sometimes present. */
function validIntent(accountId: string) {
  return fc
    .record(
      {
        amount: fc.integer({ min: 2, max: 10_000_000 }),
        customerEmail: fc.emailAddress({ size: "small" }).filter((e) => e.length <= 254),
        clientReference: fc.stringMatching(/^[A-Za-z0-9._:-]{1,40}$/),
        currency: fc.constant("NGN"),
        paymentMethod: fc.subarray(["card", "bank_transfer", "ussd", "paystack"], { minLength: 1 }),
        callbackUrl: fc.constantFrom("https://shop.example.com/paid", "http://127.0.0.1/cb?x=1"),
        withSplit: fc.boolean(),
      },
      { requiredKeys: ["amount", "customerEmail", "clientReference"] },
    )
    .map(({ withSplit, ...body }) =>
      withSplit ? { ...body, settlementAccounts: [{ settlementAccountId: accountId, splitAmount: 1 }] } : body,
    );
}

/** Create bodies: valid ones, valid ones with one field made hostile, and anything at all. */
function intentBody(accountId: string) {
  const split = fc.record(
    {
      settlementAccountId: fc.oneof({ weight: 3, arbitrary: fc.constant(accountId) }, fc.string(), anyJson),
      splitAmount: amount,
    },
    { requiredKeys: [] },
  );
  const hostileFields = {
    amount,
    customerEmail: email,
    clientReference: reference,
    currency: fc.oneof(fc.constant("NGN"), fc.string(), anyJson),
    receiptEmail: email,
    paymentMethod: fc.oneof({ weight: 3, arbitrary: fc.array(methodName, { maxLength: 12 }) }, anyJson),
    callbackUrl: url,
    settlementAccounts: fc.oneof({ weight: 3, arbitrary: fc.array(split, { maxLength: 12 }) }, anyJson),
  };
  const oneFieldHostile = fc
    .tuple(validIntent(accountId), fc.constantFrom(...Object.keys(hostileFields)), fc.string(), fc.boolean())
    .chain(([body, field, unknownName, addUnknown]) =>
      (hostileFields[field as keyof typeof hostileFields] as fc.Arbitrary<unknown>).map((value) =>
        addUnknown ? { ...body, [unknownName]: value } : { ...body, [field]: value },
      ),
    );
  const anything = fc
    .tuple(fc.record(hostileFields, { requiredKeys: [] }), fc.option(fc.tuple(fc.string(), anyJson), { freq: 5 }))
    .map(([body, extra]) => (extra ? { ...body, [extra[0]]: extra[1] } : body));
  return fc.oneof({ weight: 2, arbitrary: validIntent(accountId) }, { weight: 2, arbitrary: oneFieldHostile }, anything);
}

const accountBody = fc
  .tuple(
    fc.record(
      {
        accountName: fc.oneof({ weight: 3, arbitrary: fc.string({ minLength: 1, maxLength: 100 }) }, fc.string({ unit: "binary" }), anyJson),
        accountNumber: fc.oneof({ weight: 3, arbitrary: fc.stringMatching(/^[0-9]{10}$/) }, fc.string(), anyJson),
        bankName: fc.oneof({ weight: 3, arbitrary: fc.string({ minLength: 1, maxLength: 100 }) }, anyJson),
        bankCode: fc.oneof({ weight: 3, arbitrary: fc.stringMatching(/^[0-9]{3,6}$/) }, fc.string(), anyJson),
      },
      { requiredKeys: [] },
    ),
    fc.option(fc.tuple(fc.string(), anyJson), { freq: 5 }),
  )
  .map(([body, extra]) => (extra ? { ...body, [extra[0]]: extra[1] } : body));

/** Bodies that are not a JSON object at all, or not even text. */
const rawBody = fc.oneof(
  fc.string({ unit: "binary" }).map((s) => Buffer.from(s)),
  fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
  anyJson.map((v) => Buffer.from(JSON.stringify(v))),
  fc.constantFrom(
    Buffer.from(""),
    Buffer.from("{"),
    Buffer.from("null"),
    Buffer.from('{"amount": 1e999}'),
    Buffer.from('{"__proto__": {"amount": 1}}'),
    Buffer.from('{"constructor": {"prototype": {"x": 1}}}'),
    Buffer.from(`${"[".repeat(20_000)}${"]".repeat(20_000)}`),
    Buffer.from(`{"settlementAccounts": ${"[".repeat(20_000)}${"]".repeat(20_000)}}`),
    Buffer.concat([Buffer.from('{"customerEmail": "'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]),
    Buffer.alloc(70 * 1024, "a"),
    Buffer.from(`{"clientReference": "${"x".repeat(70 * 1024)}"}`),
  ),
);

const contentType = fc.oneof(
  { weight: 6, arbitrary: fc.constant("application/json") },
  fc.constantFrom(
    "application/json; charset=utf-8",
    "APPLICATION/JSON",
    "application/json; charset=latin1",
    "application/json;;;",
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/proto",
  ),
  fc.stringMatching(/^[\x20-\x7e]{0,60}$/),
);

/** A request-target segment: anything a hostile client can put on the request line. */
const segment = fc.oneof(
  fc.constantFrom(
    "v1",
    "v2",
    "payment-intents",
    "settlement-accounts",
    "refunds",
    "checkout",
    "..",
    ".",
    "",
    "%00",
    "%zz",
    "%2F",
    "%2e%2e",
    "%C0%AF",
    "%ED%A0%80",
    "pi_00000000-0000-7000-8000-000000000000",
    "payments.v2.PaymentIntentService",
    "CreatePaymentIntent",
  ),
  fc.string({ unit: "binary", maxLength: 20 }).map(percentEncode),
  fc.stringMatching(/^[A-Za-z0-9\-._~!$&'()*+,;=:@%]{0,24}$/),
);
/** Webhook endpoint registrations: valid ones (a public address literal, so no DNS), refused ones, and junk. */
const endpointBody = fc.record(
  {
    url: fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom("https://93.184.215.14/hooks", "https://[2606:2800:220:1:248:1893:25c8:1946]/hooks") },
      fc.constantFrom("http://93.184.215.14/h", "https://127.0.0.1/h", "https://10.0.0.1/h", "https://169.254.169.254/latest", "https://[::1]/h", "ftp://x/", "https://u:p@93.184.215.14/", ""),
      fc.webUrl(),
      fc.string(),
      anyJson,
    ),
    eventTypes: fc.oneof(fc.array(fc.oneof(fc.constantFrom(...eventTypes), fc.string()), { maxLength: 8 }), anyJson),
    description: fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: "binary", maxLength: 40 }), anyJson),
  },
  { requiredKeys: [] },
);
const query = fc.oneof(
  fc
    .array(
      fc.tuple(
        fc.oneof({ weight: 4, arbitrary: fc.constantFrom("pageSize", "pageToken", "status", "clientReference") }, fc.string()),
        fc.oneof(
          fc.string({ unit: "binary", maxLength: 40 }),
          fc.integer().map(String),
          fc.constantFrom("pending", "cancelled", "successful", "0", "101", "1e2", "-1", "50", ""),
          fc.stringMatching(/^[A-Za-z0-9_.-]{1,120}$/),
        ),
      ),
      { maxLength: 5 },
    )
    .map((pairs) => pairs.map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`).join("&")),
  fc.stringMatching(/^[A-Za-z0-9\-._~!$&'()*+,;=:@%/?]{0,80}$/),
);
const headerName = fc
  .stringMatching(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,24}$/)
  .filter((name) => !framingHeaders.has(name.toLowerCase()));
/** Header values as bytes on the wire: visible ASCII and obs-text (RFC 9110 §5.5). */
const headerValue = fc.stringMatching(/^[\x21-\x7e\x80-\xff]([\x20-\x7e\x80-\xff]{0,100}[\x21-\x7e\x80-\xff])?$/);

function authorization(key: string) {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant(`Bearer ${key}`) },
    fc.constantFrom(`bearer   ${key}`, `BEARER ${key}`, "Bearer", "Bearer ", `Basic ${key}`, `Bearer ${key}x`, `Bearer ${key.slice(0, -1)}`),
    headerValue.map((v) => `Bearer ${v}`),
    headerValue,
    fc.constant(`Bearer ${"k".repeat(600)}`),
  );
}

const rpcMethods = [
  "payments.v2.PaymentIntentService/CreatePaymentIntent",
  "payments.v2.PaymentIntentService/GetPaymentIntent",
  "payments.v2.PaymentIntentService/ListPaymentIntents",
  "payments.v2.PaymentIntentService/DeletePaymentIntent",
  "payments.v2.SettlementAccountService/CreateSettlementAccount",
  "payments.v2.SettlementAccountService/ListSettlementAccounts",
  "payments.v2.RefundService/CreateRefund",
  "payments.v2.RefundService/ListRefunds",
  "payments.v2.RefundService/GetRefund",
];

/** What one case sends, with its label for a failure message. */
interface Case {
  request: RawRequest;
}

/** parseJson reads a JSON body; undefined when it is not JSON. */
function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString());
  } catch {
    return undefined;
  }
}

const show = (request: RawRequest) =>
  `${request.method} ${JSON.stringify(request.target)} headers=${JSON.stringify(request.headers)} body=${JSON.stringify(
    request.body ? request.body.subarray(0, 300).toString("latin1") : "",
  )}${request.body && request.body.length > 300 ? `…(${request.body.length} bytes)` : ""}`;

/**
 * runHostileInput fuzzes the service with fast-check: REST bodies (intents
 * and settlement accounts), query strings, paths and headers on the raw wire,
 * and Connect JSON. Every answer must be below 500; every REST error must be
 * exactly {status, title, message} with the status and its reason phrase;
 * every Connect error must carry a code. Merchant a sends everything; at the
 * end, what is stored for a must be what was answered 2xx, and b (which sent
 * nothing) must have nothing.
 */
export async function runHostileInput(target: DrillTarget, options: HostileInputOptions): Promise<HostileInputResult> {
  const seed = options.seed ?? Date.now() % 2 ** 31;
  const { a, b } = target.merchants;
  const base = target.basePath;
  const acceptedReferences = new Set<string>();
  const acceptedAccounts = new Set<string>();
  const acceptedEndpoints = new Set<string>();

  // One settlement account, so some generated splits are valid and get stored.
  const setup = await sendRaw(target.url, {
    method: "POST",
    target: `${base}/v2/settlement-accounts`,
    headers: [
      ["authorization", `Bearer ${a.key}`],
      ["content-type", "application/json"],
    ],
    body: Buffer.from(JSON.stringify({ accountName: "Fuzz Stores", accountNumber: "0000000001", bankName: "Fuzz Bank", bankCode: "058" })),
  });
  const accountId = (JSON.parse(setup.body.toString()) as { id: string }).id;
  acceptedAccounts.add(accountId);

  const json = (value: unknown) => Buffer.from(JSON.stringify(value));
  const withAuth = (rest: [string, string][] = []): [string, string][] => [["authorization", `Bearer ${a.key}`], ...rest];

  const arbitraries: Record<FuzzKind, fc.Arbitrary<Case>> = {
    "rest-bodies": fc.oneof(
      fc.tuple(fc.oneof({ weight: 4, arbitrary: intentBody(accountId).map(json) }, rawBody), contentType).map(([body, type]) => ({
        request: { method: "POST", target: `${base}/v2/payment-intents`, headers: withAuth([["content-type", type]]), body },
      })),
      fc.tuple(fc.oneof({ weight: 4, arbitrary: accountBody.map(json) }, rawBody), contentType).map(([body, type]) => ({
        request: { method: "POST", target: `${base}/v2/settlement-accounts`, headers: withAuth([["content-type", type]]), body },
      })),
      fc.tuple(fc.oneof({ weight: 4, arbitrary: endpointBody.map(json) }, rawBody), contentType).map(([body, type]) => ({
        request: { method: "POST", target: `${base}/v2/webhook-endpoints`, headers: withAuth([["content-type", type]]), body },
      })),
      fc
        .tuple(fc.oneof(segment, fc.constant("evt_00000000-0000-7000-8000-000000000000")), fc.oneof(rawBody, anyJson.map(json)), contentType)
        .map(([id, body, type]) => ({
          request: { method: "POST", target: `${base}/v2/events/${id}/redeliver`, headers: withAuth([["content-type", type]]), body },
        })),
    ),
    "query-strings": fc
      .tuple(
        fc.constantFrom(
          "/v2/payment-intents",
          "/v2/settlement-accounts",
          "/v2/payment-intents/pi_x",
          "/v2/events",
          "/v2/webhook-endpoints",
          "/v2/webhook-endpoints/we_x/deliveries",
        ),
        query,
      )
      .map(([path, q]) => ({ request: { method: "GET", target: `${base}${path}?${q}`, headers: withAuth() } })),
    paths: fc
      .tuple(
        fc.constantFrom("GET", "POST", "DELETE", "PUT", "PATCH", "HEAD", "OPTIONS", "TRACE", "FOO"),
        fc.constantFrom(base, "", `${base}/v2`),
        fc.array(segment, { maxLength: 6 }),
        fc.option(intentBody(accountId).map(json), { freq: 3 }),
      )
      .map(([method, prefix, segments, body]) => ({
        request: {
          method,
          target: `${prefix}/${segments.join("/")}`,
          headers: withAuth(body ? [["content-type", "application/json"]] : []),
          body: body ?? undefined,
        },
      })),
    headers: fc
      .tuple(
        authorization(a.key),
        contentType,
        fc.array(fc.tuple(headerName, headerValue), { maxLength: 6 }),
        fc.constantFrom("/v2/payment-intents", "/v2/settlement-accounts"),
        fc.boolean(),
        intentBody(accountId).map(json),
      )
      .map(([auth, type, extra, path, post, body]) => ({
        request: {
          method: post ? "POST" : "GET",
          target: `${base}${path}`,
          headers: [["authorization", auth], ...(post ? ([["content-type", type]] as [string, string][]) : []), ...extra],
          body: post ? body : undefined,
        },
      })),
    "connect-json": fc
      .tuple(
        fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...rpcMethods) }, fc.string().map((s) => `payments.v2.PaymentIntentService/${percentEncode(s)}`)),
        fc.oneof(
          { weight: 3, arbitrary: intentBody(accountId).map(json) },
          accountBody.map(json),
          fc
            .record(
              {
                id: fc.oneof(fc.string(), fc.constant("pi_00000000-0000-7000-8000-000000000000"), anyJson),
                pageSize: fc.oneof(fc.integer(), fc.string(), anyJson),
                pageToken: fc.oneof(fc.string(), anyJson),
                status: fc.oneof(fc.constantFrom("pending", "cancelled"), fc.string(), anyJson),
                clientReference: reference,
                client_reference: reference,
                customer_email: email,
              },
              { requiredKeys: [] },
            )
            .map(json),
          rawBody,
        ),
        // Connect JSON only: connect-es answers a malformed *binary* body with
        // Internal (500) before any of our code runs (see docs/RELIABILITY.md).
        fc.oneof(
          { weight: 6, arbitrary: fc.constant("application/json") },
          fc.constantFrom("application/json; charset=utf-8", "application/connect+json", "text/plain", "application/jsonx", ""),
        ),
        fc.oneof({ weight: 6, arbitrary: fc.constant(`Bearer ${a.key}`) }, authorization(a.key)),
        fc.option(fc.constantFrom("1", "2", "x", ""), { freq: 4 }),
      )
      .map(([path, body, type, auth, version]) => ({
        request: {
          method: "POST",
          target: `/${path}`,
          headers: [
            ["authorization", auth],
            ["content-type", type],
            ...(version !== null ? ([["connect-protocol-version", version]] as [string, string][]) : []),
          ],
          body,
        },
      })),
  };

  /** check returns why an answer is wrong, or undefined. Records what a 2xx create stored. */
  function check(request: RawRequest, response: RawResponse): string | undefined {
    if (response.status >= 500) return `answered ${response.status}: ${response.body.toString().slice(0, 300)}`;
    const path = request.target.split("?")[0]!;
    if (response.status < 300 && request.method === "POST") {
      const body = parseJson(response.body) as { id?: unknown; clientReference?: unknown } | undefined;
      if (typeof body?.id === "string" && body.id.startsWith("pi_") && typeof body.clientReference === "string") {
        acceptedReferences.add(body.clientReference);
      }
      if (typeof body?.id === "string" && body.id.startsWith("sa_")) acceptedAccounts.add(body.id);
      if (typeof body?.id === "string" && body.id.startsWith("we_")) acceptedEndpoints.add(body.id);
    }
    if (response.status < 400 || nonRestPrefixes.some((prefix) => path === prefix || path.startsWith(`${prefix}/`))) return undefined;
    if (isRpcPath(path) && /^application\/json/.test(response.headers["content-type"] ?? "")) {
      // connect-node answers an RPC it serves with a Connect error ({code,
      // message}); a path no RPC has falls through to the REST gateway's 404.
      const body = parseJson(response.body) as { code?: unknown } | undefined;
      if (typeof body?.code === "string") return undefined;
    } else if (isRpcPath(path)) {
      return undefined;
    }
    if (!/^application\/json(;|$)/.test(response.headers["content-type"] ?? "")) {
      return `a REST error without a JSON Content-Type: ${response.headers["content-type"]}`;
    }
    if (request.method === "HEAD") return undefined;
    const body = parseJson(response.body);
    if (body === undefined) return `a REST error body that is not JSON: ${response.body.toString().slice(0, 300)}`;
    const { status, title, message, ...rest } = body as Record<string, unknown>;
    if (status !== response.status || title !== STATUS_CODES[response.status] || typeof message !== "string" || message === "") {
      return `a REST error that is not {status, title, message} for HTTP ${response.status}: ${JSON.stringify(body)}`;
    }
    if (Object.keys(rest).length > 0) return `a REST error with extra keys: ${JSON.stringify(body)}`;
    return undefined;
  }

  const kinds: KindResult[] = [];
  for (const kind of fuzzKinds) {
    const statuses: Record<number, number> = {};
    let failure: string | undefined;
    const details = await fc.check(
      fc.asyncProperty(arbitraries[kind], async ({ request }) => {
        let problem: string | undefined;
        try {
          const response = await sendRaw(target.url, request);
          statuses[response.status] = (statuses[response.status] ?? 0) + 1;
          problem = check(request, response);
        } catch (error) {
          problem = `no answer: ${String(error)}`;
        }
        if (problem) {
          failure = `${problem}\n  request: ${show(request)}`;
          return false;
        }
        return true;
      }),
      { numRuns: options.runs[kind], seed, endOnFailure: false, maxSkipsPerRun: 0 },
    );
    if (details.failed) {
      // The last failure recorded is the shrunk one; an exception (no answer, a
      // dropped connection) is reported as such.
      failure = details.errorInstance ? `${String(details.errorInstance)}\n${failure ?? ""}` : failure;
    }
    kinds.push({ kind, runs: details.numRuns, failure: details.failed ? (failure ?? "failed") : undefined, statuses });
  }

  const stored = await target.storedReferences(a.id);
  const storedAccounts = await target.storedAccounts(a.id);
  const storedEndpoints = await target.storedEndpoints(a.id);
  const storedButRejected = [
    ...stored.filter((ref) => !acceptedReferences.has(ref)).map((ref) => `intent ${ref}`),
    ...storedAccounts.filter((id) => !acceptedAccounts.has(id)).map((id) => `account ${id}`),
    ...storedEndpoints.filter((id) => !acceptedEndpoints.has(id)).map((id) => `webhook endpoint ${id}`),
  ];
  const strayRows = [
    ...(await target.storedReferences(b.id)).map((ref) => `intent ${ref}`),
    ...(await target.storedAccounts(b.id)).map((id) => `account ${id}`),
    ...(await target.storedEndpoints(b.id)).map((id) => `webhook endpoint ${id}`),
  ];
  const alive = target.alive();
  return {
    seed,
    kinds,
    acceptedIntents: acceptedReferences.size,
    acceptedAccounts: acceptedAccounts.size,
    acceptedEndpoints: acceptedEndpoints.size,
    storedButRejected,
    strayRows,
    alive,
    passed: alive && storedButRejected.length === 0 && strayRows.length === 0 && kinds.every((k) => !k.failure),
  };
}

/** describeHostileInput is the drill's one-paragraph report. */
export function describeHostileInput(result: HostileInputResult): string[] {
  const total = result.kinds.reduce((sum, k) => sum + k.runs, 0);
  const statuses: Record<number, number> = {};
  for (const k of result.kinds) for (const [s, n] of Object.entries(k.statuses)) statuses[Number(s)] = (statuses[Number(s)] ?? 0) + n;
  return [
    `${total} fast-check cases (seed ${result.seed}): ${result.kinds.map((k) => `${k.kind} ${k.runs}`).join(", ")}`,
    `answers by status: ${Object.entries(statuses)
      .map(([s, n]) => `${s}×${n}`)
      .join(", ")}`,
    `${result.acceptedIntents} intents, ${result.acceptedAccounts} settlement accounts and ${result.acceptedEndpoints} webhook endpoints accepted; stored without a 2xx: ${result.storedButRejected.length}; rows of the silent merchant: ${result.strayRows.length}; server ${result.alive ? "alive" : "DEAD"}`,
    ...result.kinds.filter((k) => k.failure).map((k) => `FAILED ${k.kind}: ${k.failure}`),
    ...result.storedButRejected.slice(0, 5).map((row) => `stored without a 2xx: ${row}`),
  ];
}
