import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { createIntent } from "../checkout/support/checkout-client.js";
import { startPaystackStandIn, type PaystackStandIn } from "../support/paystack-stand-in.js";
import { createRestClient, expectJson, type PaymentIntentJson, type RestClient } from "../support/rest-client.js";
import { startTestServer, testPaystackKey, type TestServer } from "../support/test-server.js";
import { launchChromium, startMerchantSite, withoutBrowser, type MerchantSite } from "./support/chromium.js";

/**
 * Issue 20 §2's browser test: checkout → "Pay with Paystack" → the stand-in's
 * authorization page (served from 127.0.0.1) → back to our return URL → the
 * merchant's callbackUrl; the intent is successful with Paystack's reference
 * as its transaction, and the merchant's endpoint receives
 * payment_intent.succeeded. Each run prints the time from the click to the
 * merchant's page and to its webhook (docs/payments.md quotes them).
 */
describe("Pay with Paystack in headless Chromium", { timeout: 60_000 }, () => {
  if (withoutBrowser("runs the Paystack browser scenario")) return;

  let standIn: PaystackStandIn;
  let server: TestServer;
  let client: RestClient;
  let site: MerchantSite;
  let browser: Browser;
  let page: Page;
  const consoleErrors: string[] = [];

  before(async () => {
    standIn = await startPaystackStandIn({ secretKey: testPaystackKey });
    [server, site, browser] = await Promise.all([
      startTestServer({ settings: { PAYSTACK_BASE_URL: standIn.url } }),
      startMerchantSite(),
      launchChromium(),
    ]);
    standIn.knobs.webhookUrl = `${server.url}/processor-webhooks/paystack`;
    client = createRestClient(server);
    expectJson(await client.request("POST", "/v2/webhook-endpoints", { json: { url: "https://shop.example.com/hooks", eventTypes: ["payment_intent.succeeded"] } }), 201);
    // No JavaScript: our pages and the stand-in's are plain forms.
    const context = await browser.newContext({ javaScriptEnabled: false });
    context.setDefaultTimeout(10_000);
    page = await context.newPage();
    page.on("console", (message) => {
      const favicon = new URL(message.location().url || "http://x/").pathname === "/favicon.ico";
      if (message.type() === "error" && !favicon) consoleErrors.push(`${message.text()} ${message.location().url}`);
    });
  });
  after(async () => {
    await browser?.close();
    await Promise.all([server?.close(), site?.close()]);
    await standIn?.close();
  });

  /** The merchant's payment_intent.succeeded delivery about the intent, when it comes (every delivery answered 200). */
  async function succeededWebhook(id: string): Promise<{ at: number; data: Record<string, unknown> }> {
    for (;;) {
      const held = await server.receivers.next();
      const at = performance.now();
      held.answer({ outcome: "success", statusCode: 200 });
      const body = JSON.parse(held.request.body) as { type: string; data: Record<string, unknown> };
      if (body.type === "payment_intent.succeeded" && body.data["id"] === id) return { at, data: body.data };
    }
  }

  for (const timing of ["before-return", "after-return"] as const) {
    it(`clicks through checkout, Paystack's page and back to the merchant (charge.success ${timing === "before-return" ? "before" : "after"} the return)`, async () => {
      consoleErrors.length = 0;
      standIn.knobs.webhookTiming = timing;
      const intent: PaymentIntentJson = await createIntent(client, { paymentMethod: ["card", "paystack"], callbackUrl: `${site.origin}/return?order=42` });
      const webhook = succeededWebhook(intent.id);
      assert.equal((await page.goto(intent.checkoutLink))?.status(), 200);
      await page.getByRole("heading", { name: "Paystack" }).waitFor();

      const clicked = performance.now();
      await page.getByRole("button", { name: "Pay with Paystack", exact: true }).click();
      await page.waitForURL((url) => url.origin === standIn.url);
      await page.getByRole("heading", { name: "Paystack checkout (stand-in)" }).waitFor();
      assert.match(await page.locator("body").innerText(), /ada@example\.com pays NGN 500\.00/);
      await page.getByRole("button", { name: "Pay NGN 500.00", exact: true }).click();

      await page.waitForURL((url) => url.origin === site.origin);
      await page.getByRole("heading", { name: "Back at the shop" }).waitFor();
      const landed = performance.now();
      const query = Object.fromEntries(new URL(page.url()).searchParams);
      assert.deepEqual(query, { order: "42", reference: intent.clientReference, id: intent.id, status: "successful", attempt_status: "succeeded" });
      assert.deepEqual(Object.fromEntries(site.visits.filter((visit) => visit.pathname === "/return").at(-1)!.searchParams), query, "the merchant's server saw the same query");

      const [attempt] = await server.intents.listAttempts("merchantA", intent.id);
      const paid = expectJson<PaymentIntentJson>(await client.getIntent(intent.id), 200);
      assert.deepEqual([paid.status, paid.transaction, attempt?.processor], ["successful", attempt!.id, "paystack"]);
      assert.equal(standIn.transaction(attempt!.id)?.status, "success");
      const delivered = await webhook;
      assert.equal(delivered.data["transaction"], attempt!.id);
      assert.deepEqual(consoleErrors, [], "no CSP refusal (form-action) or other error on the way");
      console.log(
        `# paystack checkout (${timing}): click → merchant's page ${(landed - clicked).toFixed(0)} ms, click → merchant's webhook ${(delivered.at - clicked).toFixed(0)} ms`,
      );
    });
  }
});
