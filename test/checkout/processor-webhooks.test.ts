import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createTestModeProcessor, testCards, testSignatureHeader } from "../../src/processor/test-mode-processor.js";
import { createIntent, openCheckout, payByCard } from "./support/checkout-client.js";
import { createRestClient, expectJson, type RestClient } from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/** POST /processor-webhooks/{processor}: verified first, settled once, answered after the commit. */
describe("processor webhooks", () => {
  let server: TestServer;
  let client: RestClient;
  const processor = createTestModeProcessor();

  before(async () => {
    server = await startTestServer({ processor });
    client = createRestClient(server);
  });
  after(() => server.close());

  const post = (body: string, headers: Record<string, string>, path = "/processor-webhooks/test") =>
    fetch(`${server.url}${path}`, { method: "POST", headers, body });

  /** An intent whose card payment timed out: its attempt is processing. */
  async function processingAttempt() {
    const intent = await createIntent(client, { paymentMethod: ["card"] });
    await payByCard(intent.checkoutLink, await openCheckout(intent.checkoutLink), { number: testCards.timesOut });
    const attempts = await server.intents.listAttempts("merchantA", intent.id);
    assert.equal(attempts[0]?.outcome, "processing");
    return { intent, attempt: attempts[0]! };
  }

  it("refuses a notice that does not verify with 401 and changes nothing", async () => {
    const { intent, attempt } = await processingAttempt();
    const signed = processor.signNotice({ kind: "attempt", noticeId: "n1", idempotencyKey: attempt.id, outcome: { kind: "succeeded", reference: "txn_x", amount: attempt.amount, currency: "NGN" } });
    const forged = await post(signed.body.replace("succeeded", "declined"), signed.headers);
    assert.equal(forged.status, 401);
    const unsigned = await post(signed.body, { "content-type": "application/json" });
    assert.equal(unsigned.status, 401);
    assert.equal(expectJson<{ status: string }>(await client.getIntent(intent.id), 200).status, "processing");
  });

  it("settles an attempt once: a repeat and a late failure change nothing", async () => {
    const { intent, attempt } = await processingAttempt();
    const success = processor.signNotice({ kind: "attempt", noticeId: "n2", idempotencyKey: attempt.id, outcome: { kind: "succeeded", reference: "txn_hook", amount: attempt.amount, currency: "NGN" } });
    assert.equal((await post(success.body, success.headers)).status, 200);
    const paid = expectJson<{ status: string; transaction: string }>(await client.getIntent(intent.id), 200);
    assert.equal(paid.status, "successful");
    assert.equal(paid.transaction, "txn_hook");
    assert.equal((await post(success.body, success.headers)).status, 200);
    const late = processor.signNotice({ kind: "attempt", noticeId: "n3", idempotencyKey: attempt.id, outcome: { kind: "declined", reference: "txn_hook", reason: "late" } });
    assert.equal((await post(late.body, late.headers)).status, 200);
    assert.deepEqual(expectJson(await client.getIntent(intent.id), 200), paid);
  });

  it("answers 404 for an unknown processor and 413 for an oversized notice", async () => {
    assert.equal((await post("{}", { "content-type": "application/json" }, "/processor-webhooks/nobody")).status, 404);
    const big = "x".repeat(70 * 1024);
    assert.equal((await post(big, { "content-type": "application/json", [testSignatureHeader]: "t=1,v1=00" })).status, 413);
  });
});
