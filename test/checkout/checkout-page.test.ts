import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { createManualClock, type ManualClock } from "../support/manual-clock.js";
import { createRestClient, expectJson, type PaymentIntentListItemJson, type RestClient } from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import {
  cards,
  createIntent,
  csrfCookieName,
  formCount,
  getPage,
  hiddenField,
  openCheckout,
  payByCard,
  seeOther,
  textOf,
  tokenOf,
  type PageResponse,
} from "./support/checkout-client.js";

const dayMs = 24 * 60 * 60 * 1000;

/** The directives of a Content-Security-Policy header, by name. */
function cspOf(res: PageResponse): Map<string, string[]> {
  const header = res.headers.get("content-security-policy");
  assert.ok(header, "the page has a Content-Security-Policy");
  return new Map(
    header
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .filter((parts) => parts[0])
      .map(([name, ...values]) => [name!.toLowerCase(), values]),
  );
}

/** The <section> of one payment method, or undefined. */
function sectionOf(html: string, method: string): string | undefined {
  return new RegExp(`<section class="card" id="method-${method}"[\\s\\S]*?</section>`).exec(html)?.[0];
}

/** Asserts a visible label with exactly this text, tied to an input by for/id. */
function assertLabelledInput(html: string, text: string): void {
  const label = new RegExp(`<label for="([^"]+)">${text}</label>`).exec(html);
  assert.ok(label, `a label reading exactly "${text}"`);
  assert.match(html, new RegExp(`<input id="${label[1]}" `), `the "${text}" label belongs to an input`);
}

/** Asserts the security headers every checkout answer carries. */
function assertSecurityHeaders(res: PageResponse): void {
  const csp = cspOf(res);
  assert.deepEqual(csp.get("default-src"), ["'none'"]);
  assert.deepEqual(csp.get("frame-ancestors"), ["'none'"]);
  assert.ok(!res.headers.get("content-security-policy")!.includes("unsafe-inline"), "no 'unsafe-inline'");
  assert.ok(!res.headers.get("content-security-policy")!.includes("unsafe-eval"), "no 'unsafe-eval'");
  assert.equal(csp.get("script-src"), undefined, "scripts fall back to default-src 'none'");
  assert.equal(res.headers.get("x-frame-options"), "DENY");
  assert.equal(res.headers.get("referrer-policy"), "same-origin");
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.equal(res.headers.get("x-content-type-options"), "nosniff");
  assert.match(res.headers.get("content-type") ?? "", /^text\/html; charset=utf-8$/);
  assert.doesNotMatch(res.html, /<script/i, "no scripts at all");
}

describe("checkout page", () => {
  let server: TestServer;
  let client: RestClient;
  let clock: ManualClock;
  before(async () => {
    clock = createManualClock("2025-06-01T09:00:00.000Z");
    server = await startTestServer({ clock });
    client = createRestClient(server);
  });
  after(() => server.close());

  describe("a pending intent", () => {
    it("shows the merchant, the amount in naira and the customer's email", async () => {
      const intent = await createIntent(client, { amount: 50000, customerEmail: "ada@example.com" });
      const page = await getPage(intent.checkoutLink);
      assert.equal(page.status, 200);
      assert.match(page.headers.get("content-type") ?? "", /^text\/html/);
      const text = textOf(page.html);
      assert.match(text, /merchantA/);
      assert.match(text, /₦500\.00/);
      assert.match(text, /ada@example\.com/);
      assert.match(text, new RegExp(`Reference ${intent.clientReference}`));
    });

    it("escapes the merchant's data it shows", async () => {
      const intent = await createIntent(client, { customerEmail: "o'brien&co{1}@example.com" });
      const page = await getPage(intent.checkoutLink);
      assert.match(page.html, /for o&#39;brien&amp;co\{1\}@example\.com/);
      assert.ok(!page.html.includes("o'brien&co"), "not raw");
    });

    const amounts: [number, string][] = [
      [123456789, "₦1,234,567.89"],
      [1, "₦0.01"],
      [100000, "₦1,000.00"],
    ];
    for (const [kobo, naira] of amounts) {
      it(`formats ${kobo} kobo as ${naira}, on the page and on the card button`, async () => {
        const intent = await createIntent(client, { amount: kobo, paymentMethod: ["card"] });
        const page = await getPage(intent.checkoutLink);
        assert.match(page.html, new RegExp(`<h1 class="amount">${naira}</h1>`));
        assert.match(page.html, new RegExp(`<button type="submit">Pay ${naira}</button>`));
      });
    }

    it("has one section per allowed method of the intent, in its order", async () => {
      const intent = await createIntent(client, { paymentMethod: ["card", "bank_transfer", "ussd"] });
      const page = await getPage(intent.checkoutLink);
      const sections = [...page.html.matchAll(/<section class="card" id="method-([a-z_]+)"/g)].map((m) => m[1]);
      assert.deepEqual(sections, ["card", "bank_transfer", "ussd"]);
    });

    const only: [string[], string[]][] = [
      [["card"], ["bank_transfer", "ussd", "paystack"]],
      [["bank_transfer", "ussd"], ["card", "paystack"]],
      [["ussd"], ["card", "bank_transfer", "paystack"]],
    ];
    for (const [allowed, absent] of only) {
      it(`shows only ${allowed.join(" and ")} when the intent allows only that`, async () => {
        const intent = await createIntent(client, { paymentMethod: allowed });
        const page = await getPage(intent.checkoutLink);
        const sections = [...page.html.matchAll(/<section class="card" id="method-([a-z_]+)"/g)].map((m) => m[1]);
        assert.deepEqual(sections, allowed);
        for (const method of absent) assert.equal(sectionOf(page.html, method), undefined, `no ${method} section`);
        assert.equal(page.html.includes("Card number"), allowed.includes("card"));
        assert.equal(page.html.includes("I have sent the money"), allowed.includes("bank_transfer"));
        assert.equal(page.html.includes("I have dialled the code"), allowed.includes("ussd"));
      });
    }

    it("offers every enabled method when the intent named none", async () => {
      const intent = await createIntent(client);
      const page = await getPage(intent.checkoutLink);
      const sections = [...page.html.matchAll(/<section class="card" id="method-([a-z_]+)"/g)].map((m) => m[1]);
      assert.deepEqual(sections, ["card", "bank_transfer", "ussd", "paystack"]);
    });

    it("labels the card fields Card number, Expiry date and CVV, with a Pay button for the amount", async () => {
      const intent = await createIntent(client, { amount: 50000, paymentMethod: ["card"] });
      const card = sectionOf((await getPage(intent.checkoutLink)).html, "card");
      assert.ok(card, "a card section");
      assertLabelledInput(card, "Card number");
      assertLabelledInput(card, "Expiry date");
      assertLabelledInput(card, "CVV");
      assert.match(card, /<input id="card-number" name="card_number"/);
      assert.match(card, /<input id="card-expiry" name="card_expiry"/);
      assert.match(card, /<input id="card-cvv" name="card_cvv"/);
      assert.match(card, /<button type="submit">Pay ₦500\.00<\/button>/);
      assert.match(card, new RegExp(`<form method="post" action="/checkout/${tokenOf(intent.checkoutLink)}/pay"`));
      assert.equal(hiddenField(card, "method"), "card");
    });

    it("shows a 10-digit test account and its bank for bank_transfer, with I have sent the money", async () => {
      const intent = await createIntent(client, { paymentMethod: ["bank_transfer"] });
      const first = await getPage(intent.checkoutLink);
      const section = sectionOf(first.html, "bank_transfer");
      assert.ok(section);
      const account = /<dd id="virtual-account">([^<]*)<\/dd>/.exec(section)?.[1];
      assert.match(account ?? "", /^\d{10}$/);
      assert.match(textOf(section), /Bank Test Bank/);
      assert.match(section, /<button type="submit">I have sent the money<\/button>/);
      assert.equal(hiddenField(section, "method"), "bank_transfer");
      // The same account on every load: the customer may reload before paying.
      assert.equal(/<dd id="virtual-account">([^<]*)<\/dd>/.exec((await getPage(intent.checkoutLink)).html)?.[1], account);
    });

    it("shows a test USSD code for ussd, with I have dialled the code", async () => {
      const intent = await createIntent(client, { paymentMethod: ["ussd"] });
      const section = sectionOf((await getPage(intent.checkoutLink)).html, "ussd");
      assert.ok(section);
      assert.match(/<strong id="ussd-code">([^<]*)<\/strong>/.exec(section)?.[1] ?? "", /^\*\d{3}\*\d+#$/);
      assert.match(section, /<button type="submit">I have dialled the code<\/button>/);
      assert.equal(hiddenField(section, "method"), "ussd");
    });

    it("sends a strict Content-Security-Policy, no framing, no referrer and no caching", async () => {
      const page = await getPage((await createIntent(client, { paymentMethod: ["card", "bank_transfer", "ussd"] })).checkoutLink);
      assertSecurityHeaders(page);
      const csp = cspOf(page);
      assert.deepEqual(csp.get("form-action"), ["'self'"], "no callbackUrl, no processor page: forms post only to the service");
      assert.deepEqual(csp.get("base-uri"), ["'none'"]);
    });

    it("allows its only style block by hash", async () => {
      const page = await getPage((await createIntent(client)).checkoutLink);
      const styles = [...page.html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]!);
      assert.equal(styles.length, 1);
      const hash = `'sha256-${createHash("sha256").update(styles[0]!).digest("base64")}'`;
      assert.deepEqual(cspOf(page).get("style-src"), [hash]);
    });

    it("lets forms go to the callbackUrl's origin, where the 303 after a payment leads", async () => {
      const intent = await createIntent(client, { paymentMethod: ["card"], callbackUrl: "https://shop.example:8443/return?order=7" });
      const csp = cspOf(await getPage(intent.checkoutLink));
      assert.deepEqual(csp.get("form-action"), ["'self'", "https://shop.example:8443"]);
    });

    it("lets forms go to Paystack's page too when paystack is offered, where choosing it leads (PAYSTACK_BASE_URL's origin here)", async () => {
      const intent = await createIntent(client, { paymentMethod: ["card", "paystack"], callbackUrl: "https://shop.example:8443/return?order=7" });
      const page = await getPage(intent.checkoutLink);
      assert.deepEqual(cspOf(page).get("form-action"), ["'self'", "https://shop.example:8443", "http://127.0.0.1:9"]);
      const section = sectionOf(page.html, "paystack")!;
      assert.match(textOf(section), /^Paystack Pay ₦500\.00 through Paystack\. Pay with Paystack$/);
    });

    it("sets a SameSite=Strict, HttpOnly CSRF cookie scoped to /checkout, and keeps it on reload", async () => {
      const intent = await createIntent(client);
      const opened = await openCheckout(intent.checkoutLink);
      const setCookie = opened.headers.get("set-cookie") ?? "";
      const attributes = setCookie.split(";").map((a) => a.trim().toLowerCase());
      assert.ok(attributes[0]!.startsWith(`${csrfCookieName}=`));
      assert.ok(attributes.includes("httponly"), setCookie);
      assert.ok(attributes.includes("samesite=strict"), setCookie);
      assert.ok(attributes.includes("path=/checkout"), setCookie);
      // Every form on the page carries the same field.
      const fields = [...opened.html.matchAll(/name="csrf" value="([^"]*)"/g)].map((m) => m[1]);
      assert.ok(fields.length >= 2 && fields.every((f) => f === opened.csrf));
      // A second tab of the same browser reuses the nonce, so both tabs' forms stay valid.
      const again = await getPage(intent.checkoutLink, { cookie: opened.cookie });
      assert.equal(again.headers.get("set-cookie"), null);
      assert.equal(hiddenField(again.html, "csrf"), opened.csrf);
    });

    it("gives another intent's page a different CSRF field for the same cookie", async () => {
      const a = await openCheckout((await createIntent(client)).checkoutLink);
      const b = await getPage((await createIntent(client)).checkoutLink, { cookie: a.cookie });
      assert.notEqual(hiddenField(b.html, "csrf"), a.csrf);
    });
  });

  describe("an intent that can no longer be paid", () => {
    const assertSettled = (page: PageResponse, status: string, heading: RegExp) => {
      assert.equal(page.status, 200);
      assertSecurityHeaders(page);
      assert.equal(formCount(page.html), 0, "no form");
      assert.doesNotMatch(page.html, /<button|<input/, "nothing to pay with");
      assert.match(page.html, new RegExp(`id="state" data-status="${status}"`));
      assert.match(textOf(page.html), heading);
      assert.match(textOf(page.html), /₦500\.00/, "still says what it was for");
    };

    it("shows a paid intent as paid", async () => {
      const intent = await createIntent(client, { paymentMethod: ["card"] });
      seeOther(await payByCard(intent.checkoutLink, await openCheckout(intent.checkoutLink), { number: cards.succeeds }), server.url);
      assertSettled(await getPage(intent.checkoutLink), "successful", /Payment received/);
    });

    it("shows a deleted intent as cancelled", async () => {
      const intent = await createIntent(client);
      expectJson(await client.deleteIntent(intent.id), 200);
      assertSettled(await getPage(intent.checkoutLink), "cancelled", /Payment cancelled/);
    });

    it("shows an intent that ran out of attempts as failed", async () => {
      const intent = await createIntent(client, { paymentMethod: ["card"] });
      const opened = await openCheckout(intent.checkoutLink);
      for (let i = 0; i < 3; i++) seeOther(await payByCard(intent.checkoutLink, opened, { number: cards.declined }), server.url);
      assertSettled(await getPage(intent.checkoutLink), "failed", /Payment failed/);
    });

    it("still offers payment a moment before the 24 hour deadline, and shows expired at it", async () => {
      const intent = await createIntent(client);
      clock.advance(dayMs - 1);
      const before = await getPage(intent.checkoutLink);
      assert.ok(formCount(before.html) > 0, "still payable");
      clock.advance(1);
      assertSettled(await getPage(intent.checkoutLink), "expired", /Payment link expired/);
      const read = expectJson<PaymentIntentListItemJson>(await client.getIntent(intent.id), 200);
      assert.equal(read.status, "expired");
    });

    it("shows expired a long time later too", async () => {
      const intent = await createIntent(client);
      clock.advance(3 * dayMs);
      assertSettled(await getPage(intent.checkoutLink), "expired", /Payment link expired/);
    });
  });

  describe("an unknown or altered link", () => {
    const comparable = (page: PageResponse) => ({
      status: page.status,
      html: page.html,
      headers: [...page.headers].filter(([name]) => name !== "date" && name !== "x-request-id"),
    });

    it("answers the same 404 page for an unknown token, an altered token and a malformed one", async () => {
      const intent = await createIntent(client, { amount: 424242, customerEmail: "secret@example.com" });
      const token = tokenOf(intent.checkoutLink);
      const flip = (c: string) => (c === "A" ? "B" : "A");
      const altered = [
        token.slice(0, -1) + flip(token.at(-1)!),
        flip(token[0]!) + token.slice(1),
        token.slice(0, 10) + flip(token[10]!) + token.slice(11),
      ];
      const urls = [
        ...altered.map((t) => `${server.url}/checkout/${t}`),
        `${server.url}/checkout/${"x".repeat(token.length)}`,
        `${server.url}/checkout/short`,
        `${server.url}/checkout/${token}/elsewhere`,
        `${server.url}/checkout/`,
      ];
      const pages = await Promise.all(urls.map((url) => getPage(url)));
      const first = comparable(pages[0]!);
      assert.equal(first.status, 404);
      assert.match(textOf(first.html), /Payment page not found/);
      for (const [i, page] of pages.entries()) assert.deepEqual(comparable(page), first, urls[i]);
      assertSecurityHeaders(pages[0]!);
      // It reveals nothing about the intent the altered token was close to.
      for (const secret of ["merchantA", "₦4,242.42", "secret@example.com", intent.id, intent.clientReference, token]) {
        assert.ok(!pages[0]!.html.includes(secret), `the 404 page does not show ${secret}`);
      }
      assert.equal(pages[0]!.headers.get("set-cookie"), null);
    });

    it("answers the same 404 for the result page of an altered token", async () => {
      const intent = await createIntent(client);
      const token = tokenOf(intent.checkoutLink);
      const altered = token.slice(0, -1) + (token.at(-1) === "A" ? "B" : "A");
      const unknown = await getPage(`${server.url}/checkout/${"x".repeat(token.length)}`);
      const result = await getPage(`${server.url}/checkout/${altered}/result?attempt=pa_1`);
      assert.deepEqual(comparable(result), comparable(unknown));
    });
  });
});
