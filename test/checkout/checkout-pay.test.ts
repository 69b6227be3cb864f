import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createManualClock, type ManualClock } from "../support/manual-clock.js";
import {
  createRestClient,
  expectJson,
  type PaymentIntentJson,
  type PaymentIntentListItemJson,
  type RestClient,
} from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import {
  cards,
  confirm,
  createIntent,
  formCount,
  getPage,
  hiddenField,
  openCheckout,
  payByCard,
  payUrl,
  postForm,
  seeOther,
  textOf,
  type OpenedCheckout,
  type PageResponse,
} from "./support/checkout-client.js";

const callbackUrl = "https://shop.example/return?order=42&lang=en";

describe("checkout form posts", () => {
  let server: TestServer;
  let client: RestClient;
  let clock: ManualClock;
  before(async () => {
    clock = createManualClock("2025-06-01T09:00:00.000Z");
    server = await startTestServer({ clock });
    client = createRestClient(server);
  });
  after(() => server.close());

  const attemptsOf = (intent: PaymentIntentJson) => server.intents.listAttempts("merchantA", intent.id);
  const read = async (intent: PaymentIntentJson) =>
    expectJson<PaymentIntentListItemJson>(await client.getIntent(intent.id), 200);

  /** Asserts a 303 to the callbackUrl with exactly its own query plus reference, id and status. */
  /**
   * Simultaneous posts: one attempt is made and ends at the merchant; a post
   * that found it with the processor (or already paid) goes back to the
   * checkout page, which shows where the payment is.
   */
  const assertOneCallbackOthersBack = (answers: PageResponse[], intent: PaymentIntentJson) => {
    const toMerchant = answers.filter((res) => seeOther(res, server.url).origin === "https://shop.example");
    assert.ok(toMerchant.length >= 1);
    for (const res of toMerchant) assertCallback(res, intent, "successful");
    for (const res of answers.filter((r) => !toMerchant.includes(r))) assert.equal(seeOther(res, server.url).href, intent.checkoutLink);
  };
  /** The callback carries the intent's status now and the attempt's outcome (a first decline: pending, declined). */
  const assertCallback = (
    res: PageResponse,
    intent: PaymentIntentJson,
    status: "successful" | "pending" | "failed",
    attemptStatus: "succeeded" | "declined" = status === "successful" ? "succeeded" : "declined",
  ) => {
    const target = seeOther(res, server.url);
    assert.equal(`${target.origin}${target.pathname}`, "https://shop.example/return");
    assert.deepEqual(Object.fromEntries(target.searchParams), {
      order: "42",
      lang: "en",
      reference: intent.clientReference,
      id: intent.id,
      status,
      attempt_status: attemptStatus,
    });
    assert.equal(res.headers.get("cache-control"), "no-store");
  };

  describe("card", () => {
    it("pays with 4084 0840 8408 4081 and sends the customer to callbackUrl with status=successful", async () => {
      const intent = await createIntent(client, { paymentMethod: ["card"], callbackUrl });
      const opened = await openCheckout(intent.checkoutLink);
      assertCallback(await payByCard(intent.checkoutLink, opened, { number: cards.succeeds }), intent, "successful");
      const attempts = await attemptsOf(intent);
      assert.equal(attempts.length, 1);
      assert.equal(attempts[0]!.outcome, "succeeded");
      assert.equal(attempts[0]!.method, "card");
      assert.equal(attempts[0]!.amount, 50000n);
    });

    it("marks the intent successful over REST, with transaction = the attempt's reference and updatedAt moved", async () => {
      clock.set("2025-06-01T09:00:00.000Z");
      const intent = await createIntent(client, { paymentMethod: ["card"], callbackUrl });
      assert.equal(intent.updatedAt, "2025-06-01T09:00:00.000Z");
      const opened = await openCheckout(intent.checkoutLink);
      clock.set("2025-06-01T09:07:30.125Z");
      assertCallback(await payByCard(intent.checkoutLink, opened, { number: cards.succeeds }), intent, "successful");
      const [attempt] = await attemptsOf(intent);
      assert.ok(attempt);
      assert.deepEqual(attempt.createdAt, new Date("2025-06-01T09:07:30.125Z"));
      const after = await read(intent);
      assert.equal(after.status, "successful");
      assert.equal(after.transaction, attempt.processorReference);
      assert.equal(after.updatedAt, "2025-06-01T09:07:30.125Z");
      assert.equal(after.createdAt, intent.createdAt);
    });

    it("declines 4000 0000 0000 0002 with attempt_status=declined&status=pending: the intent stays pending", async () => {
      const intent = await createIntent(client, { paymentMethod: ["card"], callbackUrl });
      const opened = await openCheckout(intent.checkoutLink);
      assertCallback(await payByCard(intent.checkoutLink, opened, { number: cards.declined }), intent, "pending", "declined");
      const attempts = await attemptsOf(intent);
      assert.deepEqual(attempts.map((a) => a.outcome), ["declined"]);
      assert.match(attempts[0]!.declineReason ?? "", /declined/);
      const after = await read(intent);
      assert.equal(after.status, "pending");
      assert.equal(after.transaction, null);
      // The link still works for another try.
      assert.ok(formCount((await getPage(intent.checkoutLink)).html) > 0);
    });

    it("declines any other valid number with a hint to use a test card, shown on the result page", async () => {
      const intent = await createIntent(client, { paymentMethod: ["card"] });
      const opened = await openCheckout(intent.checkoutLink);
      const res = await payByCard(intent.checkoutLink, opened, { number: cards.otherValid });
      const [attempt] = await attemptsOf(intent);
      assert.ok(attempt);
      assert.equal(attempt.outcome, "declined");
      const target = seeOther(res, server.url);
      assert.equal(target.origin, server.url);
      assert.equal(target.pathname, `/checkout/${opened.token}/result`);
      assert.deepEqual(Object.fromEntries(target.searchParams), { attempt: attempt.id });
      const result = await getPage(target.href);
      assert.equal(result.status, 200);
      assert.match(result.html, /data-status="failed"/);
      const text = textOf(result.html);
      assert.match(text, /Payment declined/);
      assert.match(text, /use a test card/);
      assert.match(result.html, new RegExp(`<a href="/checkout/${opened.token}">Try again</a>`));
      assert.equal((await read(intent)).status, "pending");
    });

    it("tells a declined attempt's result page that the payment has since been made", async () => {
      const intent = await createIntent(client, { paymentMethod: ["card"] });
      const opened = await openCheckout(intent.checkoutLink);
      const declined = seeOther(await payByCard(intent.checkoutLink, opened, { number: cards.declined }), server.url);
      seeOther(await payByCard(intent.checkoutLink, opened, { number: cards.succeeds }), server.url);
      const text = textOf((await getPage(declined.href)).html);
      assert.match(text, /Payment declined/);
      assert.match(text, /This payment has since been made\./);
      assert.doesNotMatch(text, /Try again/);
    });

    const formErrors: { name: string; number?: string; expiry?: string; cvv?: string; message: RegExp; field: string }[] = [
      { name: "a number failing the Luhn check", number: cards.luhnInvalid, message: /Enter a valid card number/, field: "number" },
      { name: "a number too short", number: "4084 0840", message: /Enter a valid card number/, field: "number" },
      { name: "letters in the number", number: "4084 0840 8408 408a", message: /Enter a valid card number/, field: "number" },
      { name: "an empty number", number: "", message: /Enter a valid card number/, field: "number" },
      { name: "a month 13 expiry", expiry: "13/30", message: /Enter the expiry date as MM\/YY/, field: "expiry" },
      { name: "an unreadable expiry", expiry: "soon", message: /Enter the expiry date as MM\/YY/, field: "expiry" },
      { name: "a past expiry", expiry: "05/25", message: /This card has expired/, field: "expiry" },
      { name: "a two-digit CVV", cvv: "12", message: /Enter the 3 or 4 digit CVV/, field: "cvv" },
      { name: "letters in the CVV", cvv: "12a", message: /Enter the 3 or 4 digit CVV/, field: "cvv" },
    ];
    for (const c of formErrors) {
      it(`answers 422 with the form error for ${c.name}, and records no attempt`, async () => {
        const intent = await createIntent(client, { paymentMethod: ["card"], callbackUrl });
        const opened = await openCheckout(intent.checkoutLink);
        const res = await payByCard(intent.checkoutLink, opened, {
          number: c.number ?? cards.succeeds,
          expiry: c.expiry,
          cvv: c.cvv,
        });
        assert.equal(res.status, 422, res.html);
        assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
        assert.match(res.headers.get("content-security-policy") ?? "", /default-src 'none'/);
        assert.match(res.html, new RegExp(`<p class="error" id="error-${c.field}">${c.message.source}`));
        assert.match(res.html, /role="alert"/);
        // The form is shown again, ready for another try with the same cookie.
        assert.equal(hiddenField(res.html, "csrf"), opened.csrf);
        assert.match(res.html, /<button type="submit">Pay ₦500\.00<\/button>/);
        assert.deepEqual(await attemptsOf(intent), []);
        assert.equal((await read(intent)).status, "pending");
      });
    }

    it("takes the corrected form with the same cookie and field", async () => {
      const intent = await createIntent(client, { paymentMethod: ["card"], callbackUrl });
      const opened = await openCheckout(intent.checkoutLink);
      assert.equal((await payByCard(intent.checkoutLink, opened, { number: cards.luhnInvalid })).status, 422);
      assertCallback(await payByCard(intent.checkoutLink, opened, { number: cards.succeeds }), intent, "successful");
      assert.equal((await attemptsOf(intent)).length, 1);
    });
  });

  describe("bank transfer and USSD", () => {
    for (const method of ["bank_transfer", "ussd"]) {
      it(`keeps a confirmed ${method} processing, the customer on the result page, until the processor's webhook`, async () => {
        const intent = await createIntent(client, { paymentMethod: [method], callbackUrl });
        const opened = await openCheckout(intent.checkoutLink);
        const target = seeOther(await confirm(intent.checkoutLink, opened, method), server.url);
        const attempts = await attemptsOf(intent);
        assert.deepEqual(attempts.map((a) => [a.method, a.outcome]), [[method, "processing"]]);
        assert.equal(target.href, `${server.url}/checkout/${opened.token}/result?attempt=${attempts[0]!.id}`);
        const after = await read(intent);
        assert.equal(after.status, "processing");
        assert.equal(after.transaction, null);
      });
    }

    it("refuses a method the intent does not offer, and charges nothing", async () => {
      const intent = await createIntent(client, { paymentMethod: ["card"], callbackUrl });
      const opened = await openCheckout(intent.checkoutLink);
      const res = await confirm(intent.checkoutLink, opened, "bank_transfer");
      assert.equal(res.status, 400, res.html);
      assert.match(textOf(res.html), /not offered/);
      assert.deepEqual(await attemptsOf(intent), []);
      assert.equal((await read(intent)).status, "pending");
    });
  });

  describe("without a callbackUrl", () => {
    it("sends the customer to a result page that shows the successful payment", async () => {
      const intent = await createIntent(client, { paymentMethod: ["card", "ussd"] });
      const opened = await openCheckout(intent.checkoutLink);
      const target = seeOther(await payByCard(intent.checkoutLink, opened, { number: cards.succeeds }), server.url);
      const [attempt] = await attemptsOf(intent);
      assert.ok(attempt);
      assert.equal(target.href, `${server.url}/checkout/${opened.token}/result?attempt=${attempt.id}`);
      const result = await getPage(target.href);
      assert.equal(result.status, 200);
      assert.match(result.html, /data-status="successful"/);
      assert.match(textOf(result.html), new RegExp(`Payment successful ₦500\\.00 paid\\. Reference ${attempt.processorReference}`));
      assert.equal(formCount(result.html), 0);
    });

    it("answers 404 for an attempt that is not this intent's", async () => {
      const a = await createIntent(client, { paymentMethod: ["ussd"] });
      const b = await createIntent(client, { paymentMethod: ["ussd"] });
      const target = seeOther(await confirm(a.checkoutLink, await openCheckout(a.checkoutLink), "ussd"), server.url);
      const attemptId = target.searchParams.get("attempt")!;
      assert.equal((await getPage(`${b.checkoutLink}/result?attempt=${attemptId}`)).status, 404);
      assert.equal((await getPage(`${a.checkoutLink}/result?attempt=pa_nope`)).status, 404);
      assert.equal((await getPage(`${a.checkoutLink}/result`)).status, 404);
    });
  });

  describe("attempt limit", () => {
    it("fails the intent after 3 declined attempts, and its page then offers no payment", async () => {
      const intent = await createIntent(client, { paymentMethod: ["card", "bank_transfer"], callbackUrl });
      const opened = await openCheckout(intent.checkoutLink);
      for (let i = 1; i <= 2; i++) {
        assertCallback(await payByCard(intent.checkoutLink, opened, { number: cards.declined }), intent, "pending", "declined");
        assert.equal((await read(intent)).status, "pending", `still pending after ${i} declines`);
        assert.match(textOf((await getPage(intent.checkoutLink)).html), new RegExp(`${3 - i} attempts? left`));
      }
      assertCallback(await payByCard(intent.checkoutLink, opened, { number: cards.declined }), intent, "failed");
      const after = await read(intent);
      assert.equal(after.status, "failed");
      assert.equal(after.transaction, null);
      assert.equal((await attemptsOf(intent)).length, 3);
      const page = await getPage(intent.checkoutLink);
      assert.match(page.html, /data-status="failed"/);
      assert.equal(formCount(page.html), 0);
      // A form left open in another tab charges nothing any more.
      const late = await confirm(intent.checkoutLink, opened, "bank_transfer");
      assert.equal(seeOther(late, server.url).pathname, `/checkout/${opened.token}`);
      assert.equal((await attemptsOf(intent)).length, 3);
      assert.equal((await read(intent)).status, "failed");
    });
  });

  describe("an intent that is no longer payable", () => {
    it("sends a repeated submit of a paid intent where the first went, charging nothing", async () => {
      const intent = await createIntent(client, { paymentMethod: ["card"], callbackUrl });
      const opened = await openCheckout(intent.checkoutLink);
      assertCallback(await payByCard(intent.checkoutLink, opened, { number: cards.succeeds }), intent, "successful");
      assertCallback(await payByCard(intent.checkoutLink, opened, { number: cards.succeeds }), intent, "successful");
      assert.equal((await attemptsOf(intent)).length, 1);
    });

    it("charges nothing on a form posted after the intent was deleted or expired", async () => {
      const deleted = await createIntent(client, { paymentMethod: ["card"], callbackUrl });
      const expired = await createIntent(client, { paymentMethod: ["card"], callbackUrl });
      const openedDeleted = await openCheckout(deleted.checkoutLink);
      const openedExpired = await openCheckout(expired.checkoutLink);
      expectJson(await client.deleteIntent(deleted.id), 200);
      clock.advance(24 * 60 * 60 * 1000);
      for (const [intent, opened] of [[deleted, openedDeleted], [expired, openedExpired]] as const) {
        const res = await payByCard(intent.checkoutLink, opened, { number: cards.succeeds });
        assert.equal(seeOther(res, server.url).pathname, `/checkout/${opened.token}`);
        assert.deepEqual(await attemptsOf(intent), []);
      }
      assert.equal((await server.intents.findById("merchantA", deleted.id))?.status, "cancelled");
      assert.equal((await read(expired)).status, "expired");
    });
  });

  describe("cross-site protection", () => {
    const refused: { name: string; post: (link: string, opened: OpenedCheckout, other: OpenedCheckout) => Promise<PageResponse> }[] = [
      {
        name: "without the csrf field",
        post: (link, opened) =>
          postForm(payUrl(link), { method: "card", card_number: cards.succeeds, card_expiry: "12/39", card_cvv: "123" }, { cookie: opened.cookie }),
      },
      {
        name: "with a forged csrf field",
        post: (link, opened) =>
          postForm(
            payUrl(link),
            { csrf: opened.csrf.slice(0, -2) + (opened.csrf.endsWith("AA") ? "BB" : "AA"), method: "card", card_number: cards.succeeds, card_expiry: "12/39", card_cvv: "123" },
            { cookie: opened.cookie },
          ),
      },
      {
        name: "without the cookie",
        post: (link, opened) =>
          postForm(payUrl(link), { csrf: opened.csrf, method: "card", card_number: cards.succeeds, card_expiry: "12/39", card_cvv: "123" }, { cookie: null }),
      },
      {
        name: "with another browser's cookie",
        post: (link, opened, other) =>
          postForm(payUrl(link), { csrf: opened.csrf, method: "card", card_number: cards.succeeds, card_expiry: "12/39", card_cvv: "123" }, { cookie: other.cookie }),
      },
      {
        name: "with the csrf field of another intent's page",
        post: (link, _opened, other) =>
          postForm(payUrl(link), { csrf: other.csrf, method: "card", card_number: cards.succeeds, card_expiry: "12/39", card_cvv: "123" }, { cookie: other.cookie }),
      },
      {
        name: "from a foreign Origin",
        post: (link, opened) =>
          postForm(
            payUrl(link),
            { csrf: opened.csrf, method: "card", card_number: cards.succeeds, card_expiry: "12/39", card_cvv: "123" },
            { cookie: opened.cookie, origin: "https://evil.example" },
          ),
      },
      {
        // An opaque origin: a sandboxed frame or a data: page elsewhere.
        name: "from Origin: null",
        post: (link, opened) =>
          postForm(
            payUrl(link),
            { csrf: opened.csrf, method: "card", card_number: cards.succeeds, card_expiry: "12/39", card_cvv: "123" },
            { cookie: opened.cookie, origin: "null" },
          ),
      },
    ];
    for (const c of refused) {
      it(`answers 403 to a post ${c.name}, and charges nothing`, async () => {
        const intent = await createIntent(client, { paymentMethod: ["card"], callbackUrl });
        const opened = await openCheckout(intent.checkoutLink);
        const other = await openCheckout((await createIntent(client)).checkoutLink);
        const res = await c.post(intent.checkoutLink, opened, other);
        assert.equal(res.status, 403, res.html);
        assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
        assert.deepEqual(await attemptsOf(intent), []);
        assert.equal((await read(intent)).status, "pending");
      });
    }

    it("accepts a post from the service's own Origin", async () => {
      const intent = await createIntent(client, { paymentMethod: ["card"], callbackUrl });
      const opened = await openCheckout(intent.checkoutLink);
      const res = await postForm(
        payUrl(intent.checkoutLink),
        { csrf: opened.csrf, method: "card", card_number: cards.succeeds, card_expiry: "12/39", card_cvv: "123" },
        { cookie: opened.cookie, origin: server.url },
      );
      assertCallback(res, intent, "successful");
    });
  });

  describe("protocol", () => {
    for (const contentType of ["application/json", "multipart/form-data; boundary=x", "text/plain"]) {
      it(`answers 415 to a post of ${contentType}, and charges nothing`, async () => {
        const intent = await createIntent(client, { paymentMethod: ["ussd"], callbackUrl });
        const opened = await openCheckout(intent.checkoutLink);
        const res = await postForm(payUrl(intent.checkoutLink), { csrf: opened.csrf, method: "ussd" }, { cookie: opened.cookie, contentType });
        assert.equal(res.status, 415, res.html);
        assert.deepEqual(await attemptsOf(intent), []);
      });
    }

    const wrongMethods: { method: string; suffix: string; allow: string }[] = [
      { method: "GET", suffix: "/pay", allow: "POST" },
      { method: "PUT", suffix: "/pay", allow: "POST" },
      { method: "POST", suffix: "", allow: "GET, HEAD" },
      { method: "DELETE", suffix: "", allow: "GET, HEAD" },
      { method: "POST", suffix: "/result", allow: "GET, HEAD" },
    ];
    for (const w of wrongMethods) {
      it(`answers 405 with Allow: ${w.allow} to ${w.method} /checkout/<token>${w.suffix}`, async () => {
        const intent = await createIntent(client, { paymentMethod: ["ussd"], callbackUrl });
        const opened = await openCheckout(intent.checkoutLink);
        const res = await fetch(`${intent.checkoutLink}${w.suffix}`, {
          method: w.method,
          headers: w.method === "GET" || w.method === "DELETE" ? { cookie: opened.cookie } : { cookie: opened.cookie, "content-type": "application/x-www-form-urlencoded" },
          body: w.method === "GET" || w.method === "DELETE" ? undefined : new URLSearchParams({ csrf: opened.csrf, method: "ussd" }).toString(),
          redirect: "manual",
        });
        await res.text();
        assert.equal(res.status, 405);
        assert.equal(res.headers.get("allow"), w.allow);
        assert.deepEqual(await attemptsOf(intent), []);
      });
    }
  });

  describe("concurrency", () => {
    it("records exactly one successful attempt for two simultaneous posts of the good card", async () => {
      const intent = await createIntent(client, { paymentMethod: ["card"], callbackUrl });
      const opened = await openCheckout(intent.checkoutLink);
      const answers = await Promise.all([
        payByCard(intent.checkoutLink, opened, { number: cards.succeeds }),
        payByCard(intent.checkoutLink, opened, { number: cards.succeeds }),
      ]);
      assertOneCallbackOthersBack(answers, intent);
      const attempts = await attemptsOf(intent);
      assert.deepEqual(attempts.map((a) => a.outcome), ["succeeded"]);
      assert.equal((await read(intent)).transaction, attempts[0]!.processorReference);
    });

    it("records one success when two tabs pay by card and by bank transfer at once", async () => {
      const intent = await createIntent(client, { paymentMethod: ["card", "bank_transfer"], callbackUrl });
      const opened = await openCheckout(intent.checkoutLink);
      const answers = await Promise.all([
        payByCard(intent.checkoutLink, opened, { number: cards.succeeds }),
        confirm(intent.checkoutLink, opened, "bank_transfer"),
        payByCard(intent.checkoutLink, opened, { number: cards.succeeds }),
      ]);
      // One attempt is made: a card pays at once; a transfer waits (on the result page) for its money.
      const attempts = await attemptsOf(intent);
      assert.equal(attempts.length, 1);
      if (attempts[0]!.method === "card") {
        assertOneCallbackOthersBack(answers, intent);
        assert.equal(attempts[0]!.outcome, "succeeded");
      } else {
        assert.equal(attempts[0]!.outcome, "processing");
        const targets = answers.map((res) => seeOther(res, server.url).href);
        assert.deepEqual(targets.filter((href) => href !== intent.checkoutLink), [`${server.url}/checkout/${opened.token}/result?attempt=${attempts[0]!.id}`]);
      }
    });
  });
});
