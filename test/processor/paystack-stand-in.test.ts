import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import type { ProcessorNotice } from "../../src/processor/payment-processor.js";
import { createPaystackProcessor } from "../../src/processor/paystack/paystack-processor.js";
import { startPaystackStandIn, type PaystackStandIn } from "../support/paystack-stand-in.js";
import { waitFor } from "../support/redis.js";

const secretKey = "sk_test_9f8e7d6c5b4a39281706f5e4d3c2b1a0ffeeddcc";
const signal = () => new AbortController().signal;

/** A receiver for the stand-in's webhooks that parses each one with the adapter, as the service's route will. */
async function startReceiver(parse: (headers: Record<string, string | string[] | undefined>, raw: Buffer) => ProcessorNotice) {
  const notices: ProcessorNotice[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    try {
      notices.push(parse(req.headers, Buffer.concat(chunks)));
      res.writeHead(200).end();
    } catch {
      res.writeHead(401).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/processor-webhooks/paystack`,
    notices,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("the Paystack stand-in", () => {
  let standIn: PaystackStandIn;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const processor = () => createPaystackProcessor({ secretKey, baseUrl: standIn.url, timeoutMs: 10_000 });

  before(async () => {
    standIn = await startPaystackStandIn({ secretKey });
    receiver = await startReceiver((headers, raw) => processor().parseWebhook(headers, raw));
    standIn.knobs.webhookUrl = receiver.url;
  });
  after(async () => {
    await standIn.close();
    await receiver.close();
  });

  const begin = async (key: string) => {
    const outcome = await processor().begin(
      {
        idempotencyKey: key,
        paymentIntentId: `pi_${key}`,
        merchantId: "merchantA",
        amount: 75_000n,
        currency: "NGN",
        method: "paystack",
        customerEmail: "ada@example.com",
        returnUrl: `http://127.0.0.1:9/checkout/tok/return?attempt=${key}`,
      },
      signal(),
    );
    assert.equal(outcome.kind, "redirect");
    return (outcome as { url: string }).url;
  };

  it("its authorization page takes the payment and sends the customer back to callback_url with reference and trxref, the signed charge.success first", async () => {
    const url = await begin("att_page_1");
    const page = await fetch(url);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<button type="submit">Pay NGN 750\.00<\/button>/);
    const paid = await fetch(`${url}/pay`, { method: "POST", redirect: "manual" });
    assert.equal(paid.status, 302);
    assert.equal(paid.headers.get("location"), "http://127.0.0.1:9/checkout/tok/return?attempt=att_page_1&trxref=att_page_1&reference=att_page_1");
    assert.deepEqual(standIn.webhooksSent.at(-1), { event: "charge.success", status: 200 });
    assert.deepEqual(receiver.notices.at(-1), {
      kind: "attempt",
      idempotencyKey: "att_page_1",
      outcome: { kind: "succeeded", reference: "att_page_1", amount: 75_000n, currency: "NGN" },
      noticeId: `charge.success:${standIn.transaction("att_page_1")!.id}`,
    });
  });

  it("its Cancel sends the customer back with the reference, the transaction abandoned and no webhook", async () => {
    const url = await begin("att_page_cancel");
    const sent = standIn.webhooksSent.length;
    const back = await fetch(`${url}/cancel`, { method: "POST", redirect: "manual" });
    assert.equal(back.status, 302);
    assert.equal(back.headers.get("location"), "http://127.0.0.1:9/checkout/tok/return?attempt=att_page_cancel&trxref=att_page_cancel&reference=att_page_cancel");
    assert.equal(standIn.transaction("att_page_cancel")!.status, "abandoned");
    assert.equal(standIn.webhooksSent.length, sent);
  });

  it("sends charge.success after the return when told to", async () => {
    standIn.knobs.webhookTiming = "after-return";
    const url = await begin("att_page_2");
    const before = standIn.webhooksSent.length;
    await fetch(`${url}/pay`, { method: "POST", redirect: "manual" });
    assert.equal(standIn.webhooksSent.length, before);
    await waitFor(() => standIn.webhooksSent.length === before + 1, 5_000, "charge.success after the return");
    standIn.knobs.webhookTiming = "before-return";
  });

  it("sends refund.processed naming our refund through its merchant_note", async () => {
    await begin("att_page_3");
    await standIn.pay("att_page_3");
    const outcome = await processor().refund({ idempotencyKey: "rf_page_3", attempt: { idempotencyKey: "att_page_3", reference: "att_page_3", amount: 75_000n }, amount: 25_000n }, signal());
    assert.equal(outcome.kind, "pending");
    await waitFor(() => standIn.webhooksSent.at(-1)?.event === "refund.processed", 5_000, "refund.processed");
    assert.deepEqual(standIn.webhooksSent.at(-1), { event: "refund.processed", status: 200 });
    assert.deepEqual(receiver.notices.at(-1), {
      kind: "refund",
      idempotencyKey: "rf_page_3",
      outcome: { kind: "succeeded", reference: (outcome as { reference: string }).reference },
      noticeId: `refund.processed:${(outcome as { reference: string }).reference}`,
    });
  });

  it("a webhook signed with another key is refused by the adapter (401 at the receiver)", async () => {
    await begin("att_page_4");
    await standIn.pay("att_page_4");
    const status = await standIn.sendWebhook(receiver.url, standIn.chargeSuccessEvent("att_page_4"), "sk_test_" + "1".repeat(40));
    assert.equal(status, 401);
  });
});
