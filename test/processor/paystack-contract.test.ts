import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import addFormats from "ajv-formats";
import { OpenAPIBackend } from "openapi-backend";
import type { PaymentProcessor } from "../../src/processor/payment-processor.js";
import { createPaystackProcessor } from "../../src/processor/paystack/paystack-processor.js";
import { paystackRoutes, startPaystackStandIn, type PaystackStandIn } from "../support/paystack-stand-in.js";

/**
 * Paystack's own OpenAPI description (PaystackOSS/openapi, MIT), read in
 * place and never copied into the project: PAYSTACK_OPENAPI names it, else
 * the shared folder beside the checkout (../shared, or ../../shared from a
 * worktree). Where it is absent (a user's fresh clone) this test skips and says why.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const candidates = process.env.PAYSTACK_OPENAPI
  ? [process.env.PAYSTACK_OPENAPI]
  : [resolve(root, "../shared/processors/paystack/paystack.yaml"), resolve(root, "../../shared/processors/paystack/paystack.yaml")];
const descriptionPath = candidates.find((path) => existsSync(path));
const skip = descriptionPath
  ? false
  : `Paystack's OpenAPI description is absent (looked at ${candidates.join(", ")}): set PAYSTACK_OPENAPI to a copy of dist/paystack.yaml from PaystackOSS/openapi to run this test`;

const secretKey = "sk_test_0a1b2c3d4e5f60718293a4b5c6d7e8f901234567";
const signal = () => new AbortController().signal;

describe("the Paystack adapter and stand-in, held to Paystack's OpenAPI description", { skip }, () => {
  let api: OpenAPIBackend;
  let standIn: PaystackStandIn;
  let processor: PaymentProcessor;

  before(async () => {
    api = new OpenAPIBackend({
      definition: descriptionPath!,
      quick: true,
      customizeAjv: (ajv) => {
        addFormats.default(ajv);
        return ajv;
      },
    });
    await api.init();
    // OpenAPI 3.0.3 §4.7.24.1: `nullable` without `type` has no effect; Ajv refuses such a schema outright, so drop it (nothing else changes).
    dropTypelessNullable(api.definition);
    dropTypelessNullable(api.document);
    standIn = await startPaystackStandIn({ secretKey });
    processor = createPaystackProcessor({ secretKey, baseUrl: standIn.url, timeoutMs: 10_000 });
  });
  after(() => standIn?.close());

  it("every request the adapter sends and every answer the stand-in gives match the description", async () => {
    // Every call the adapter makes, in each state the stand-in can answer from.
    const begin = (key: string) =>
      processor.begin(
        {
          idempotencyKey: key,
          paymentIntentId: `pi_${key}`,
          merchantId: "merchantA",
          amount: 500_000n,
          currency: "NGN",
          method: "paystack",
          customerEmail: "ada@example.com",
          returnUrl: `http://127.0.0.1:9/checkout/tok/return?attempt=${key}`,
        },
        signal(),
      );
    const ref = (key: string) => ({ idempotencyKey: key, reference: key, amount: 500_000n });
    assert.equal((await begin("att_contract_1")).kind, "redirect");
    assert.equal((await begin("att_contract_1")).kind, "unknown"); // the duplicate reference: a 400
    assert.equal((await processor.status(ref("att_contract_1"), signal())).kind, "declined"); // abandoned
    await standIn.pay("att_contract_1");
    assert.equal((await processor.status(ref("att_contract_1"), signal())).kind, "succeeded");
    assert.equal((await processor.status(ref("att_contract_none"), signal())).kind, "declined"); // a 404
    standIn.knobs.refundsBecome = "pending";
    const refund = await processor.refund({ idempotencyKey: "rf_contract_1", attempt: ref("att_contract_1"), amount: 200_000n }, signal());
    assert.equal(refund.kind, "pending");
    assert.equal((await processor.refund({ idempotencyKey: "rf_contract_2", attempt: ref("att_contract_1"), amount: 900_000n }, signal())).kind, "failed");
    assert.equal((await processor.refundStatus({ idempotencyKey: "rf_contract_1", reference: (refund as { reference: string }).reference }, signal())).kind, "pending");
    assert.equal((await processor.refundStatus({ idempotencyKey: "rf_contract_1", reference: null }, signal())).kind, "pending");
    assert.equal((await processor.refundStatus({ idempotencyKey: "rf_contract_1", reference: "999" }, signal())).kind, "unknown"); // a 404
    const wrongKey = createPaystackProcessor({ secretKey: "sk_test_" + "9".repeat(40), baseUrl: standIn.url, timeoutMs: 10_000 });
    assert.equal((await wrongKey.status(ref("att_contract_1"), signal())).kind, "unknown"); // a 401
    standIn.knobs.down = [...paystackRoutes];
    assert.equal((await begin("att_contract_2")).kind, "declined"); // a 503 (the description's "default"): nothing can be charged
    standIn.knobs.down = [];

    const operations = new Set<string>();
    assert.ok(standIn.exchanges.length >= 13, `only ${standIn.exchanges.length} calls were made`);
    for (const exchange of standIn.exchanges) {
      const name = `${exchange.method} ${exchange.path} → ${exchange.status}`;
      const request = { method: exchange.method, path: exchange.path, query: exchange.query, headers: exchange.headers, body: exchange.body };
      const operation = api.matchOperation(request);
      assert.ok(operation, `${name}: no operation of the description matches`);
      operations.add(operation.operationId ?? "");
      assert.match(exchange.headers.authorization ?? "", /^Bearer sk_(test|live)_/, `${name}: not the description's bearerAuth`);
      const requestResult = api.validateRequest(request, operation);
      assert.ok(requestResult.valid, `${name}: the request does not match ${operation.operationId}: ${JSON.stringify(requestResult.errors)}`);
      const responseResult = api.validateResponse(exchange.response, operation, exchange.status);
      assert.ok(responseResult.valid, `${name}: the answer does not match ${operation.operationId}: ${JSON.stringify(responseResult.errors)}`);
      const documented = Object.keys(operation.responses ?? {});
      assert.ok(documented.includes(String(exchange.status)) || documented.includes("default"), `${name}: status not in the description`);
    }
    assert.deepEqual([...operations].sort(), ["refund_create", "refund_fetch", "refund_list", "transaction_initialize", "transaction_verify"]);
  });

  it("the validator is not lenient: a request or an answer that breaks the description is caught", async () => {
    const operation = api.matchOperation({ method: "POST", path: "/transaction/initialize", headers: {} })!;
    const badRequest = api.validateRequest(
      { method: "POST", path: "/transaction/initialize", headers: { "content-type": "application/json" }, body: { email: "a@b.c", amount: "5000" } },
      operation,
    );
    assert.equal(badRequest.valid, false);
    const badAnswer = api.validateResponse({ status: true, message: "ok", data: { authorization_url: "https://x" } }, operation, 200);
    assert.equal(badAnswer.valid, false);
  });
});

/** Removes `nullable` from every schema object that has no `type` (where the specification gives it no meaning). */
function dropTypelessNullable(node: unknown, seen = new Set<object>()): void {
  if (typeof node !== "object" || node === null || seen.has(node)) return;
  seen.add(node);
  const object = node as Record<string, unknown>;
  if (object.nullable !== undefined && object.type === undefined) delete object.nullable;
  for (const value of Object.values(object)) dropTypelessNullable(value, seen);
}
