import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { createIntent, tokenOf } from "../checkout/support/checkout-client.js";
import { createManualClock, type ManualClock } from "../support/manual-clock.js";
import {
  createRestClient,
  expectJson,
  type PaymentIntentJson,
  type PaymentIntentListJson,
  type RestClient,
} from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { launchChromium, startMerchantSite, withoutBrowser, type MerchantSite } from "./support/chromium.js";

/** The one DOM call made inside the page (the project compiles without the DOM lib). */
type StyleWindow = { getComputedStyle(element: unknown): { backgroundColor: string } };

describe("checkout in headless Chromium", { timeout: 60_000 }, () => {
  if (withoutBrowser()) return;

  let server: TestServer;
  let client: RestClient;
  let clock: ManualClock;
  let site: MerchantSite;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** Console errors (a CSP refusal shows up here), cleared per test. */
  let consoleErrors: string[] = [];
  const paid: PaymentIntentJson[] = [];

  before(async () => {
    clock = createManualClock(new Date());
    [server, site, browser] = await Promise.all([
      startTestServer({ clock, settings: { TEST_PROCESSOR_WEBHOOK_DELAY_MS: "300" } }),
      // The shop's return page says whether the order was paid, from the query the checkout sent.
      startMerchantSite(
        (url) => `<!doctype html><title>Merchant</title><h1>Back at the shop</h1><p id="status">${url.searchParams.get("status") === "successful" ? "paid" : "not paid"}</p>`,
      ),
      launchChromium(),
    ]);
    client = createRestClient(server);
    // The page must work without client-side JavaScript (issue 4): plain forms only.
    context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 480, height: 900 } });
    context.setDefaultTimeout(5_000);
    page = await context.newPage();
    page.on("console", (message) => {
      // The browser's own favicon request may 404; any other error (a CSP refusal) counts.
      const favicon = new URL(message.location().url || "http://x/").pathname === "/favicon.ico";
      if (message.type() === "error" && !favicon) consoleErrors.push(`${message.text()} ${message.location().url}`);
    });
  });
  after(async () => {
    await browser?.close();
    await Promise.all([server?.close(), site?.close()]);
  });

  const callbackUrl = () => `${site.origin}/return?order=42`;

  /** Waits until the browser is on the merchant's site and returns the query it was sent with. */
  async function landedOnMerchant(): Promise<Record<string, string>> {
    await page.waitForURL((url) => url.origin === site.origin);
    await page.getByRole("heading", { name: "Back at the shop" }).waitFor();
    const url = new URL(page.url());
    assert.equal(url.pathname, "/return");
    // The browser may fetch /favicon.ico too: look at the returns only.
    const returns = site.visits.filter((visit) => visit.pathname === "/return");
    assert.equal(returns.at(-1)?.search, url.search, "the merchant's server saw the same query");
    return Object.fromEntries(url.searchParams);
  }

  async function payByCard(number: string, amount = "₦500.00") {
    await page.getByLabel("Card number", { exact: true }).fill(number);
    await page.getByLabel("Expiry date", { exact: true }).fill("12/39");
    await page.getByLabel("CVV", { exact: true }).fill("123");
    await page.getByRole("button", { name: `Pay ${amount}`, exact: true }).click();
  }

  it("pays by card and lands on callbackUrl with reference, id and status=successful", async () => {
    consoleErrors = [];
    const intent = await createIntent(client, { paymentMethod: ["card", "bank_transfer", "ussd"], callbackUrl: callbackUrl() });
    const response = await page.goto(intent.checkoutLink);
    assert.equal(response?.status(), 200);
    await page.getByRole("heading", { name: "₦500.00" }).waitFor();
    assert.match(await page.locator("body").innerText(), /merchantA[\s\S]*ada@example\.com/);
    // The hashed style block applies under the CSP: the button is styled.
    const background = await page.getByRole("button", { name: "Pay ₦500.00" }).evaluate((el) => (globalThis as unknown as StyleWindow).getComputedStyle(el).backgroundColor);
    assert.equal(background, "rgb(31, 94, 255)");
    await page.screenshot({ path: "/tmp/checkout.png", fullPage: true });

    await payByCard("4084 0840 8408 4081");
    assert.deepEqual(await landedOnMerchant(), { order: "42", reference: intent.clientReference, id: intent.id, status: "successful", attempt_status: "succeeded" });
    assert.deepEqual(consoleErrors, [], "no CSP refusal or other error on the way");
    paid.push(intent);
  });

  it("declines a card with attempt_status=declined&status=pending, then takes a good card from the same link", async () => {
    const intent = await createIntent(client, { paymentMethod: ["card"], callbackUrl: callbackUrl() });
    await page.goto(intent.checkoutLink);
    await payByCard("4000 0000 0000 0002");
    assert.deepEqual(await landedOnMerchant(), { order: "42", reference: intent.clientReference, id: intent.id, status: "pending", attempt_status: "declined" });

    await page.goto(intent.checkoutLink);
    await page.getByText("2 attempts left").waitFor();
    await payByCard("4084 0840 8408 4081");
    assert.deepEqual(await landedOnMerchant(), { order: "42", reference: intent.clientReference, id: intent.id, status: "successful", attempt_status: "succeeded" });
    paid.push(intent);
  });

  it("shows a form error for a mistyped card number and charges nothing", async () => {
    const intent = await createIntent(client, { paymentMethod: ["card"], callbackUrl: callbackUrl() });
    await page.goto(intent.checkoutLink);
    await payByCard("4084 0840 8408 4082");
    await page.getByText("Enter a valid card number.").waitFor();
    assert.equal(new URL(page.url()).origin, server.url);
    assert.deepEqual(await server.intents.listAttempts("merchantA", intent.id), []);
  });

  /** A transfer's money arrives later: the customer waits on the result page, and its Refresh finds it paid once the processor's webhook came. */
  async function waitForTransfer(intent: PaymentIntentJson) {
    await page.getByRole("heading", { name: "Payment processing" }).waitFor();
    for (let i = 0; i < 100 && (await server.intents.findById("merchantA", intent.id))?.status === "processing"; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    await page.getByRole("link", { name: "Refresh", exact: true }).click();
  }

  it("pays by bank transfer", async () => {
    const intent = await createIntent(client, { paymentMethod: ["bank_transfer"], callbackUrl: callbackUrl() });
    await page.goto(intent.checkoutLink);
    assert.match(await page.locator("#virtual-account").innerText(), /^\d{10}$/);
    await page.getByRole("button", { name: "I have sent the money", exact: true }).click();
    await waitForTransfer(intent);
    assert.deepEqual(await landedOnMerchant(), { order: "42", reference: intent.clientReference, id: intent.id, status: "successful", attempt_status: "succeeded" });
    paid.push(intent);
  });

  it("shows the result page when there is no callbackUrl", async () => {
    const intent = await createIntent(client, { paymentMethod: ["ussd"] });
    await page.goto(intent.checkoutLink);
    await page.getByRole("button", { name: "I have dialled the code", exact: true }).click();
    await waitForTransfer(intent);
    await page.getByRole("heading", { name: "Payment successful" }).waitFor();
    assert.equal(new URL(page.url()).pathname, `/checkout/${tokenOf(intent.checkoutLink)}/result`);
    paid.push(intent);
  });

  it("shows an expired link as expired, with no form", async () => {
    const intent = await createIntent(client, { paymentMethod: ["card"], callbackUrl: callbackUrl() });
    clock.advance(24 * 60 * 60 * 1000 + 1);
    await page.goto(intent.checkoutLink);
    await page.getByRole("heading", { name: "Payment link expired" }).first().waitFor();
    assert.equal(await page.locator("form").count(), 0);
    assert.equal(await page.getByRole("button").count(), 0);
  });

  it("shows a deleted intent's link as cancelled, with no form", async () => {
    const intent = await createIntent(client, { callbackUrl: callbackUrl() });
    expectJson(await client.deleteIntent(intent.id), 200);
    await page.goto(intent.checkoutLink);
    await page.getByRole("heading", { name: "Payment cancelled" }).first().waitFor();
    assert.equal(await page.locator("form").count(), 0);
  });

  it("then lists the paid intents as successful with transaction set", async () => {
    assert.equal(paid.length, 4, "the payments above all went through");
    const list = expectJson<PaymentIntentListJson>(await client.listIntents({ status: "successful" }), 200);
    for (const intent of paid) {
      const item = list.paymentIntents.find((i) => i.id === intent.id);
      assert.ok(item, `${intent.id} is listed as successful`);
      assert.equal(item.status, "successful");
      assert.match(item.transaction ?? "", /^txn_test_[0-9a-f]{24}$/);
      const attempts = await server.intents.listAttempts("merchantA", intent.id);
      const success = attempts.filter((a) => a.outcome === "succeeded");
      assert.equal(success.length, 1);
      assert.equal(item.transaction, success[0]!.processorReference);
    }
  });
});
