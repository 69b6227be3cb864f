import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Code, createClient } from "@connectrpc/connect";
import { PaymentIntentService } from "../../gen/payments/v2/payment_intent_pb.js";
import { redactText, redactValue } from "../../src/observability/redact.js";
import { expectConnectError, rpcProtocols } from "../rpc/support/rpc-helpers.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { captureLogs, waitForLine, type CapturedLogs } from "./support/capture-logs.js";

describe("redactText", () => {
  const cases: { text: string; want: string }[] = [
    { text: "4111111111111111", want: "************1111" },
    { text: "card 4111 1111 1111 1111 declined", want: "card **** **** **** 1111 declined" },
    { text: "5500-0000-0000-0004", want: "****-****-****-0004" },
    { text: "13 digits 4222222222222.", want: "13 digits *********2222." },
    { text: "19 digits 6011000990139424124", want: "19 digits ***************4124" },
    { text: "not luhn 1234567890123456 stays", want: "not luhn 1234567890123456 stays" },
    { text: "Migration20261121000000_initial", want: "Migration20261121000000_initial" },
    { text: "glued 4111111111111111x and _4111111111111111 stay", want: "glued 4111111111111111x and _4111111111111111 stay" },
    { text: "12 digits 123456789012 stay", want: "12 digits 123456789012 stay" },
    { text: "20 digits 12345678901234567890 stay", want: "20 digits 12345678901234567890 stay" },
    { text: "amount 50000 and time 2026-11-21T14:30:11.579Z stay", want: "amount 50000 and time 2026-11-21T14:30:11.579Z stay" },
    { text: "amex 3782 822463 10005", want: "amex **** ****** *0005" },
    { text: "19 grouped 6011-0009-9013-9424-124", want: "19 grouped ****-****-****-***4-124" },
    { text: "uuid 12345678-1234-4123-8123-123456789012 stays", want: "uuid 12345678-1234-4123-8123-123456789012 stays" },
    { text: "pi_01234567-8901-7234-8567-890123456789", want: "pi_01234567-8901-7234-8567-890123456789" },
    { text: "grouped too short 4111 1111 1111", want: "grouped too short 4111 1111 1111" },
    { text: "ada@example.com", want: "a***@example.com" },
    { text: "to <bob.smith+tag@mail.example.org>, cc x@y.ng", want: "to <b***@mail.example.org>, cc x***@y.ng" },
    { text: "Authorization: Bearer sk_test_abcdefghijklmnop", want: `Authorization: Bearer [redacted]` },
    { text: "bearer abc.def-ghi, next", want: "bearer [redacted], next" },
    { text: "PAYSTACK_SECRET_KEY=sk_live_0123456789abcdef0123 set", want: "PAYSTACK_SECRET_KEY=sk_live_[redacted] set" },
    { text: "key sk_test_abcdef0123456789abcd.", want: "key sk_test_[redacted]." },
  ];
  for (const { text, want } of cases) {
    it(`masks ${JSON.stringify(text)}`, () => assert.equal(redactText(text), want));
  }
});

describe("redactValue", () => {
  it("masks at any depth, blanks credential keys, masks PAN-sized integers and error messages", () => {
    const error = new Error("charge of 4111111111111111 for ada@example.com failed");
    const redacted = redactValue({
      authorization: "Bearer sk_live_0123456789abcdef",
      headers: { Authorization: "Bearer x", cookie: "session=1", "x-api-key": "k" },
      pageTokenSecret: "s".repeat(40),
      apiKey: "sk_test",
      pan: 4111111111111111n,
      amount: 50000,
      number: 4111111111111111,
      list: [{ customerEmail: "ada@example.com" }],
      err: error,
      none: null,
    }) as Record<string, unknown>;
    assert.deepEqual(
      { ...redacted, err: undefined },
      {
        authorization: "[redacted]",
        headers: { Authorization: "[redacted]", cookie: "[redacted]", "x-api-key": "[redacted]" },
        pageTokenSecret: "[redacted]",
        apiKey: "[redacted]",
        pan: "[redacted]",
        amount: 50000,
        number: "************1111",
        list: [{ customerEmail: "a***@example.com" }],
        err: undefined,
        none: null,
      },
    );
    const err = redacted["err"] as Record<string, string>;
    assert.equal(err["message"], "charge of ************1111 for a***@example.com failed");
    assert.ok(!err["stack"]!.includes("4111111111111111"));
  });
});

describe("the logger", () => {
  it("redacts fields and the message of every line", () => {
    const logs = captureLogs();
    logs.logger.info(
      { authorization: "Bearer sk_test_secret_value_123", customer: { email: "ada@example.com" }, note: "card 4242 4242 4242 4242" },
      "receipt for ada@example.com paid with 4242424242424242",
    );
    logs.logger.error({ err: new Error("declined 5555555555554444") }, "boom");
    const text = logs.text();
    for (const secret of ["sk_test_secret_value_123", "ada@example.com", "4242 4242 4242 4242", "4242424242424242", "5555555555554444"]) {
      assert.ok(!text.includes(secret), `${secret} reached the log: ${text}`);
    }
    const [first, second] = logs.lines();
    assert.equal(first!["authorization"], "[redacted]");
    assert.deepEqual(first!["customer"], { email: "a***@example.com" });
    assert.equal(first!["note"], "card **** **** **** 4242");
    assert.equal(first!["msg"], "receipt for a***@example.com paid with ************4242");
    assert.match(JSON.stringify(second!["err"]), /declined \*{12}4444/);
  });
});

describe("request logs of a running server", () => {
  let server: TestServer;
  let logs: CapturedLogs;
  before(async () => {
    logs = captureLogs();
    server = await startTestServer({ logger: logs.logger });
  });
  after(() => server.close());

  it("never contain an API key, valid or not, on any protocol", async () => {
    const wrongKey = "sk_test_not_a_real_key_0123456789";
    for (const authorization of [server.bearer(), `Bearer ${wrongKey}`, `bearer ${server.keys["merchantB"]}`]) {
      await fetch(`${server.restUrl}/v2/payment-intents`, { headers: { authorization } });
      await fetch(`${server.restUrl}/v2/nowhere?key=${encodeURIComponent(authorization)}`, { headers: { authorization } });
    }
    for (const protocol of rpcProtocols) {
      const client = createClient(PaymentIntentService, protocol.transport(server.url, []));
      await client.listPaymentIntents({}, { headers: { authorization: server.bearer() } });
      await expectConnectError(client.listPaymentIntents({}, { headers: { authorization: `Bearer ${wrongKey}` } }), Code.Unauthenticated);
    }
    await waitForLine(logs, (line) => line["protocol"] === "grpc" && line["code"] === "Unauthenticated");
    const text = logs.text();
    assert.ok(logs.requests().length >= 14, text);
    for (const key of [...Object.values(server.keys), wrongKey]) assert.ok(!text.includes(key), `a key reached the log: ${text}`);
  });

  it("never contain a card number or an email sent in a path, a query or a body", async () => {
    const pan = "4111111111111111";
    await fetch(`${server.url}/pay/${pan}?email=ada@example.com&pan=${pan}`, { headers: { "x-request-id": "pan-in-path" } });
    await fetch(`${server.restUrl}/v2/payment-intents`, {
      method: "POST",
      headers: { authorization: server.bearer(), "content-type": "application/json", "x-request-id": "pan-in-body" },
      body: JSON.stringify({ amount: 100, customerEmail: "ada@example.com", clientReference: pan, cardNumber: pan }),
    });
    const pathLine = await waitForLine(logs, (line) => line["requestId"] === "pan-in-path");
    assert.equal(pathLine["path"], "/pay/************1111");
    await waitForLine(logs, (line) => line["requestId"] === "pan-in-body");
    const text = logs.text();
    assert.ok(!text.includes(pan), text);
    assert.ok(!text.includes("ada@example.com"), text);
  });
});
