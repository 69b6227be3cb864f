import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSystemClock } from "../../src/lib/clock.js";
import { createIdGenerator } from "../../src/lib/ids.js";
import { cards, openCheckout, payByCard, seeOther } from "../checkout/support/checkout-client.js";
import { connectOutcome, http1 } from "../hostile/support/wire.js";
import {
  createRestClient,
  expectJson,
  type PaymentIntentJson,
  type PaymentIntentListJson,
  type RestClient,
} from "../support/rest-client.js";
import { startTestServer, testStoreKind, type TestServer } from "../support/test-server.js";

const badHost = "callbackUrl must name its host as a DNS name or an IP address";
const badUrl = "callbackUrl must be an absolute http or https URL of at most 2048 characters";

/** Hosts a URL parser accepts (";", ",", quotes, "*", "=" are not forbidden host code points) but DNS has no name for. */
const refusedHosts = [
  "https://shop;x.example/paid",
  "https://a,b.example/paid",
  "https://shop.example.com;sandbox/paid",
  "https://shop.example.com,x/paid",
  "https://'unsafe-inline'.example/paid",
  "https://*.example.com/paid",
  "https://shop_1.example.com/paid",
  "https://-shop.example.com/paid",
  "https://shop.example.com%3Bsandbox/paid",
  "https://shop!.example.com/paid",
  "https://shop.exa$mple.com/paid",
];

/** Control characters and white space, anywhere in the text: URL parsers drop or encode them silently. */
const refusedCharacters: [string, string][] = [
  ["a tab in the host", "https://shop.exa\tmple.com/paid"],
  ["a newline in the path", "https://shop.example.com/pa\nid"],
  ["a carriage return at the end", "https://shop.example.com/paid\r"],
  ["a leading space", " https://shop.example.com/paid"],
  ["a trailing space", "https://shop.example.com/paid "],
  ["a space in the query", "https://shop.example.com/paid?a=b c"],
  ["DEL", "https://shop.example.com/pa\u007fid"],
  ["a C1 control (NEL)", "https://shop.example.com/paid\u0085"],
  ["a no-break space", "https://shop.example.com\u00a0/paid"],
  ["a line separator", "https://shop.example.com/paid\u2028"],
  ["a zero-width space in the host", "https://shop.exa\u200bmple.com/paid"],
  ["a byte-order mark", "\ufeffhttps://shop.example.com/paid"],
  ["an ideographic space", "https://shop.example.com/\u3000"],
];

/** What is stored and returned: the WHATWG serialisation. */
const normalised: [string, string][] = [
  ["HTTPS://Shop.EXAMPLE.com:443/a?b=c#d", "https://shop.example.com/a?b=c#d"],
  ["http://shop.example.com:80", "http://shop.example.com/"],
  ["https://ñandú.example/paid", "https://xn--and-6ma2c.example/paid"],
  ["https://shop%2Eexample.com/x", "https://shop.example.com/x"],
  ["https://shop.example.com/ü?q=ü", "https://shop.example.com/%C3%BC?q=%C3%BC"],
  ["https://[0:0::1]:8443/cb", "https://[::1]:8443/cb"],
  ["https://0x7f.1/", "https://127.0.0.1/"],
  ["https://shop.example.com\\paid", "https://shop.example.com/paid"],
];

/** The Content-Security-Policy header as directive → sources; a repeated directive or a comma fails the test. */
function cspOf(header: string | null): Map<string, string[]> {
  assert.ok(header, "the page has a Content-Security-Policy");
  assert.ok(!header.includes(","), `one policy, not several: ${header}`);
  const directives = new Map<string, string[]>();
  for (const part of header.split(";")) {
    const [name, ...sources] = part.trim().split(/\s+/);
    assert.ok(name && !directives.has(name), `directive ${name} once: ${header}`);
    directives.set(name, sources);
  }
  return directives;
}

const expectedDirectives = ["default-src", "style-src", "img-src", "form-action", "frame-ancestors", "base-uri"];

describe(`callbackUrl (${testStoreKind} store)`, () => {
  let server: TestServer;
  let client: RestClient;
  let seq = 0;
  const create = (callbackUrl: string) =>
    // Card only: no processor page (Paystack's) joins the callback origin in form-action.
    client.createIntent({ amount: 500, customerEmail: "ada@example.com", clientReference: `cb-${++seq}`, callbackUrl, paymentMethod: ["card"] });

  before(async () => {
    server = await startTestServer();
    client = createRestClient(server);
  });
  after(() => server.close());

  // Fails on e1d5b66: any host new URL() accepted was stored, so ";" and "," reached the checkout page's CSP.
  describe("a host that is not a DNS name or an IP literal", () => {
    for (const url of refusedHosts) {
      it(`refuses ${JSON.stringify(url)} with 400 naming callbackUrl`, async () => {
        const res = await create(url);
        assert.deepEqual([res.status, JSON.parse(res.text).message], [400, badHost]);
      });
    }
  });

  // Fails on e1d5b66 (new URL() dropped or encoded these and the URL was stored), but for the three before the
  // scheme, which pin README's callbackUrl rule.
  describe("control characters and white space anywhere", () => {
    for (const [name, url] of refusedCharacters) {
      it(`refuses ${name} with 400 naming callbackUrl`, async () => {
        const res = await create(url);
        assert.deepEqual([res.status, JSON.parse(res.text).message], [400, badUrl]);
      });
    }

    it("stored none of the refused URLs", async () => {
      const list = expectJson<PaymentIntentListJson>(await client.listIntents({ pageSize: "100" }), 200);
      assert.deepEqual(list.paymentIntents.filter((i) => i.callbackUrl !== null && !normalised.some(([, n]) => n === i.callbackUrl)), []);
    });
  });

  // Fails on e1d5b66 (stored and returned as sent); the redirect case pins README "stored and returned normalised".
  describe("the stored and returned value is the normalised URL", () => {
    for (const [sent, expected] of normalised) {
      it(`stores ${JSON.stringify(sent)} as ${expected}, in the create, the read and the list`, async () => {
        const created = expectJson<PaymentIntentJson>(await create(sent), 201);
        assert.equal(created.callbackUrl, expected);
        const read = expectJson<PaymentIntentJson>(await client.getIntent(created.id), 200);
        assert.equal(read.callbackUrl, expected);
        const list = expectJson<PaymentIntentListJson>(await client.listIntents({ clientReference: created.clientReference }), 200);
        assert.deepEqual(list.paymentIntents.map((i) => i.callbackUrl), [expected]);
        const stored = await server.intents.findById("merchantA", created.id);
        assert.equal(stored?.callbackUrl, expected);
      });
    }

    it("returns the same normalised value over Connect", async () => {
      const body = JSON.stringify({ amount: "500", customerEmail: "ada@example.com", clientReference: `cb-${++seq}`, callbackUrl: "HTTPS://Shop.Example.COM:443/x" });
      const outcome = connectOutcome(
        await http1(server.port, "POST", "/payments.v2.PaymentIntentService/CreatePaymentIntent", { "content-type": "application/json", authorization: server.bearer() }, body),
      );
      assert.equal(outcome.code, "OK");
      assert.equal((JSON.parse(outcome.messages[0]!.toString()) as { callbackUrl: string }).callbackUrl, "https://shop.example.com/x");
    });

    it("sends the customer to the normalised URL after paying", async () => {
      const intent = expectJson<PaymentIntentJson>(await create("HTTPS://Shop.Example.COM:443/return?order=7"), 201);
      const opened = await openCheckout(intent.checkoutLink);
      const target = seeOther(await payByCard(intent.checkoutLink, opened, { number: cards.succeeds }), server.url);
      assert.equal(`${target.origin}${target.pathname}`, "https://shop.example.com/return");
      assert.equal(target.searchParams.get("order"), "7");
    });
  });

  // Fails before the fix in this branch (a value stored before validation put ";" and "," into the header, and one
  // URL() refuses made the page a 500); the first case pins README "form-action names only that origin".
  describe("the checkout page's Content-Security-Policy", () => {
    it("names exactly the validated origin in form-action, in a single well-formed policy", async () => {
      const intent = expectJson<PaymentIntentJson>(await create("https://Shop.Example.com:8443/return?x=1;y=2,z"), 201);
      const page = await fetch(intent.checkoutLink);
      const csp = cspOf(page.headers.get("content-security-policy"));
      assert.deepEqual([...csp.keys()], expectedDirectives);
      assert.deepEqual(csp.get("form-action"), ["'self'", "https://shop.example.com:8443"]);
    });

    for (const legacy of ["https://shop;sandbox.example/paid", "https://a,b.example/paid", "https://shop.example.com/pa\tid", "https://sh op.example/paid"]) {
      it(`treats a stored callbackUrl that fails validation (${JSON.stringify(legacy)}) as none: not in the policy, not a redirect`, async () => {
        const ids = createIdGenerator(createSystemClock());
        // A fresh pending intent, stored again under another id and token with the legacy value.
        const fresh = expectJson<PaymentIntentJson>(await client.createIntent({ amount: 500, customerEmail: "ada@example.com", clientReference: `legacy-base-${++seq}`, paymentMethod: ["card"] }), 201);
        const template = await server.intents.findById("merchantA", fresh.id);
        assert.ok(template, "an intent to copy");
        const token = ids.checkoutToken("merchantA");
        const record = { ...template, id: ids.paymentIntentId(false), clientReference: `legacy-${++seq}`, checkoutToken: token, callbackUrl: legacy, splits: [] };
        assert.equal((await server.intents.insert(record)).inserted, true);

        const page = await fetch(`${server.url}/checkout/${token}`);
        assert.equal(page.status, 200);
        const csp = cspOf(page.headers.get("content-security-policy"));
        assert.deepEqual([...csp.keys()], expectedDirectives);
        assert.deepEqual(csp.get("form-action"), ["'self'"]);
        await page.text();

        // Paying ends on the service's own result page, not at the stored value (nor in a 500).
        const link = `${server.url}/checkout/${token}`;
        const target = seeOther(await payByCard(link, await openCheckout(link), { number: cards.succeeds }), server.url);
        assert.equal(`${target.origin}${target.pathname}`, `${server.url}/checkout/${token}/result`);
      });
    }
  });
});
