/**
 * Reference: the floor of a create on PostgreSQL (issue 24). A bare
 * node:http server and a plain `pg` pool (POOL_MAX, the service's default 10)
 * that, for each POST, parses the same create body and writes what our create
 * writes to the database, the intent row and its `payment_intent.created`
 * event row (a binary payload and a JSON body of the sizes ours stores), in
 * one statement with bound parameters, then answers 201 JSON. No framework,
 * no validation, no authentication, no idempotency check beyond the unique
 * key, no outbox context, no deliveries. `npm run bench` starts it beside the
 * service on the same database and reads its CPU, its backends' CPU and the
 * WAL it writes, as for ours.
 *
 * A GET of /v1/v2/payment-intents answers the first page (pageSize, default
 * 50) of the merchant whose key (API_KEYS, `merchant:key,…`) is the bearer
 * token, over the same pool: one statement in the shape of our store's list
 * (bench/support/reference-list-page.ts), rendered as our REST list body.
 * No page token is read, no filter, no deadline statement, no request log.
 * The statement is sent unnamed, as plain `pg` does by default (parsed and
 * planned on every call), or with LIST_PREPARED=true as a named statement,
 * parsed once per connection (a custom plan per call still, as ours).
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { extraIntentColumns, knownIntentColumns, type ExtraColumn } from "./support/intent-columns.js";
import { referenceListText, renderReferenceListPage, type ReferenceListRow } from "./support/reference-list-page.js";

const databaseUrl = process.env.DATABASE_URL;
const merchantId = process.env.MERCHANT_ID;
if (!databaseUrl || !merchantId) throw new Error("DATABASE_URL and MERCHANT_ID are required");
const pool = new pg.Pool({ connectionString: databaseUrl, max: Number(process.env.POOL_MAX ?? 10), application_name: "bench-ref-pg-http" });

/** Bearer key to merchant id, for the list route. */
const merchantsByKey = new Map(
  (process.env.API_KEYS ?? "")
    .split(",")
    .filter((entry) => entry.includes(":"))
    .map((entry) => [entry.slice(entry.indexOf(":") + 1), entry.slice(0, entry.indexOf(":"))] as const),
);
const tokenSecret = randomBytes(32).toString("base64url");
const listPrepared = process.env.LIST_PREPARED === "true";

const extras: ExtraColumn[] = await extraIntentColumns(pool);
const columns = [...knownIntentColumns, ...extras.map((c) => c.name)];
const eventAt = columns.length + 1;
const insertText = `
  with intent as (
    insert into payment_intents (${columns.join(", ")}) values (${columns.map((_, i) => `$${i + 1}`).join(", ")})
    returning merchant_id, id, created_at
  )
  insert into events (merchant_id, id, type, payment_intent_id, created_at, payload, body)
  select merchant_id, $${eventAt}, 'payment_intent.created', id, created_at, $${eventAt + 1}, $${eventAt + 2} from intent`;

function parametersOf(body: Record<string, unknown>, intent: Record<string, unknown>, now: Date): unknown[] {
  const reference = String(body["clientReference"]);
  const intentValues = [
    intent["id"],
    merchantId,
    String(body["amount"]),
    String(body["amount"]),
    "NGN",
    "NG",
    String(body["customerEmail"]),
    String(body["customerEmail"]),
    "pending",
    reference,
    body["callbackUrl"] ?? null,
    null,
    `${randomBytes(32).toString("base64url")}.${Buffer.from(merchantId!).toString("base64url")}`,
    createHash("sha256").update(JSON.stringify(body)).digest("hex"),
    now,
    now,
    null,
    ...extras.map((c) => c.parameter(now)),
  ];
  const eventBody = JSON.stringify({ type: "payment_intent.created", timestamp: now.toISOString(), data: intent });
  // Ours stores the event twice: its protobuf bytes (about 60 % of the JSON here) and its REST JSON body.
  const payload = Buffer.from(eventBody.slice(0, Math.round(eventBody.length * 0.6)));
  return [...intentValues, `evt_${randomUUID()}`, payload, eventBody];
}

/** listPage answers GET /v1/v2/payment-intents: the bearer key's merchant's first page, in its key's mode. */
function listPage(req: http.IncomingMessage, res: http.ServerResponse): void {
  const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
  const merchant = merchantsByKey.get(key);
  if (!merchant) {
    res.writeHead(401, { "content-type": "application/json" }).end('{"status":401}');
    return;
  }
  const url = new URL(req.url ?? "/", "http://reference");
  const pageSize = Math.min(100, Math.max(1, Number(url.searchParams.get("pageSize") ?? 50) || 50));
  const livemode = key.startsWith("sk_live_");
  pool.query<ReferenceListRow>({ text: referenceListText, values: [merchant, livemode, pageSize + 1], ...(listPrepared && { name: "list_page" }) }).then(
    ({ rows }) => {
      const payload = renderReferenceListPage(rows, { publicUrl: origin, tokenSecret, pageSize });
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }).end(payload);
    },
    () => res.writeHead(500, { "content-type": "application/json" }).end('{"status":500}'),
  );
}

let origin = "";
const server = http.createServer((req, res) => {
  if (req.method === "GET" && req.url?.startsWith("/v1/v2/payment-intents")) {
    listPage(req, res);
    req.resume();
    return;
  }
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
    } catch {
      res.writeHead(400, { "content-type": "application/json" }).end('{"status":400}');
      return;
    }
    const now = new Date();
    const intent = { id: `pi_${randomUUID()}`, ...body, status: "pending", createdAt: now.toISOString(), updatedAt: now.toISOString() };
    pool.query(insertText, parametersOf(body, intent, now)).then(
      () => {
        const payload = JSON.stringify(intent);
        res.writeHead(201, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }).end(payload);
      },
      (error: { code?: string }) => {
        res.writeHead(error.code === "23505" ? 409 : 500, { "content-type": "application/json" }).end(`{"status":"${error.code ?? "error"}"}`);
      },
    );
  });
});

server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? "127.0.0.1", () => {
  const { address, port } = server.address() as AddressInfo;
  origin = `http://${address}:${port}`;
  // The same start line as src/main.ts logs, so the bench starts both alike.
  process.stderr.write(`${JSON.stringify({ msg: "baseline listening", url: `http://${address}:${port}` })}\n`);
});
process.on("SIGTERM", () => {
  void pool.end().finally(() => process.exit(0));
});
