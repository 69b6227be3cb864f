/**
 * Reference: what a user might build instead. Fastify 5 answering the REST
 * create with a JSON schema for the body (validated by Fastify's Ajv) and one
 * for the 201 answer (serialized by fast-json-stringify), a bearer-key check
 * in an onRequest hook, a Map store scoped to the merchant, and a JSON answer.
 *
 * With REQUEST_LOG=file:<path>, Fastify's own logger (pino) writes one line
 * per request, Fastify's "request completed" line with its req/res
 * serializers, to that file through pino.destination (sonic-boom,
 * asynchronous: Fastify's default way of writing). Fastify's default second
 * line per request ("incoming request") is off, so both servers write one.
 *
 * `npm run bench` starts it as a process of its own (HOST, PORT, API_KEYS as
 * the service reads them) and drives it with the REST create's exact request.
 */
import { randomUUID } from "node:crypto";
import Fastify from "fastify";

const requestLog = process.env.REQUEST_LOG ?? "";
const logFile = requestLog.startsWith("file:") ? requestLog.slice("file:".length) : undefined;

/** API_KEYS as the service reads it: merchant:key,… */
const merchantByAuthorization = new Map(
  (process.env.API_KEYS ?? "").split(",").flatMap((entry) => {
    const at = entry.indexOf(":");
    return at > 0 ? [[`Bearer ${entry.slice(at + 1)}` as string, entry.slice(0, at)] as const] : [];
  }),
);

interface CreateBody {
  amount: number;
  customerEmail: string;
  clientReference: string;
  currency?: string;
  receiptEmail?: string;
  paymentMethod?: string[];
  callbackUrl?: string;
}

const createBodySchema = {
  type: "object",
  required: ["amount", "customerEmail", "clientReference"],
  additionalProperties: false,
  properties: {
    amount: { type: "integer", minimum: 1, maximum: 1_000_000_000_000 },
    customerEmail: { type: "string", format: "email", maxLength: 254 },
    currency: { type: "string", enum: ["NGN"] },
    clientReference: { type: "string", pattern: "^[A-Za-z0-9._:-]{1,100}$" },
    receiptEmail: { type: "string", format: "email", maxLength: 254 },
    paymentMethod: {
      type: "array",
      maxItems: 10,
      uniqueItems: true,
      items: { type: "string", enum: ["card", "bank_transfer", "ussd"] },
    },
    callbackUrl: { type: "string", format: "uri", maxLength: 2048 },
  },
} as const;

const intentSchema = {
  type: "object",
  properties: {
    id: { type: "string" },
    amount: { type: "integer" },
    totalAmount: { type: "integer" },
    currency: { type: "string" },
    receiptEmail: { type: "string" },
    customerEmail: { type: "string" },
    country: { type: "string" },
    status: { type: "string" },
    clientReference: { type: "string" },
    paymentMethod: { type: "array", items: { type: "string" } },
    callbackUrl: { type: "string" },
    createdAt: { type: "string" },
    updatedAt: { type: "string" },
  },
} as const;

const app = Fastify({
  logger: logFile ? { level: "info", file: logFile } : false,
  disableRequestLogging: true,
});

const intents = new Map<string, Record<string, unknown>>();

app.decorateRequest("merchantId", "");
app.addHook("onRequest", async (request, reply) => {
  const merchantId = merchantByAuthorization.get(request.headers.authorization ?? "");
  if (merchantId === undefined) {
    return reply.code(401).send({ status: 401, title: "Unauthorized", message: "missing or unknown API key" });
  }
  (request as unknown as { merchantId: string }).merchantId = merchantId;
});
if (logFile) {
  app.addHook("onResponse", async (request, reply) => {
    reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, "request completed");
  });
}

app.post<{ Body: CreateBody }>(
  "/v1/v2/payment-intents",
  { schema: { body: createBodySchema, response: { 201: intentSchema } } },
  async (request, reply) => {
    const body = request.body;
    const merchantId = (request as unknown as { merchantId: string }).merchantId;
    const now = new Date().toISOString();
    const intent = {
      id: `pi_${randomUUID()}`,
      amount: body.amount,
      totalAmount: body.amount,
      currency: body.currency ?? "NGN",
      receiptEmail: body.receiptEmail ?? body.customerEmail,
      customerEmail: body.customerEmail,
      country: "NG",
      status: "pending",
      clientReference: body.clientReference,
      paymentMethod: body.paymentMethod ?? ["card", "bank_transfer", "ussd"],
      callbackUrl: body.callbackUrl,
      createdAt: now,
      updatedAt: now,
    };
    intents.set(`${merchantId}/${body.clientReference}`, intent);
    return reply.code(201).header("location", `/v1/v2/payment-intents/${intent.id}`).send(intent);
  },
);

const address = await app.listen({ host: process.env.HOST ?? "127.0.0.1", port: Number(process.env.PORT ?? 0) });
process.stderr.write(`${JSON.stringify({ msg: "reference listening", url: address })}\n`);
// At once: wrk's keep-alive connections would hold a graceful close.
process.on("SIGTERM", () => process.exit(0));
