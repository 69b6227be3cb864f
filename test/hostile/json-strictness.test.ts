import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { connectOutcome, envelope, grpcWebOutcome, http1, type RpcOutcome } from "./support/wire.js";

const createPath = "/payments.v2.PaymentIntentService/CreatePaymentIntent";
const listPath = "/payments.v2.PaymentIntentService/ListPaymentIntents";

/** The proto3 JSON protocols, sending a JSON text as is. */
const jsonProtocols: { name: string; call(server: TestServer, path: string, json: string): Promise<RpcOutcome> }[] = [
  {
    name: "Connect JSON",
    call: async (server, path, json) =>
      connectOutcome(await http1(server.port, "POST", path, { "content-type": "application/json", authorization: server.bearer() }, json)),
  },
  {
    name: "gRPC-Web JSON",
    call: async (server, path, json) =>
      grpcWebOutcome(
        await http1(server.port, "POST", path, { "content-type": "application/grpc-web+json", authorization: server.bearer() }, envelope(0, Buffer.from(json))),
      ),
  },
];

const rest = (server: TestServer, method: string, path: string, json: string) =>
  http1(server.port, method, `/v1${path}`, { "content-type": "application/json", authorization: server.bearer() }, json);

/** Integers written any way but ^-?[0-9]+$: what BigInt() and Number() would also read. */
const notDecimal = ["0x3E8", "0X3e8", "0b1111101000", "0o1750", "+5", " 5", "5 ", "\t5", "5\n", "1e3", "1_000", "5.0", "", "-", "١٢٣", "Infinity", "NaN"];

// Fails on e1d5b66: protobuf-es read int64 strings with BigInt(), so "0x3E8" was 1000 kobo and " 5" was 5 (others: parser text).
describe("int64 strings in proto3 JSON", () => {
  let server: TestServer;
  let seq = 0;

  before(async () => {
    server = await startTestServer({ store: "memory" });
  });
  after(() => server.close());

  for (const protocol of jsonProtocols) {
    for (const text of notDecimal) {
      it(`refuses amount ${JSON.stringify(text)} over ${protocol.name}: InvalidArgument "amount must be an integer"`, async () => {
        const body = JSON.stringify({ amount: text, customerEmail: "ada@example.com", clientReference: `int64-${++seq}` });
        const outcome = await protocol.call(server, createPath, body);
        assert.deepEqual([outcome.code, outcome.message], ["InvalidArgument", "amount must be an integer"]);
      });
    }

    it(`refuses a splitAmount of "0x01" over ${protocol.name}, naming it`, async () => {
      const body = JSON.stringify({
        amount: "500",
        customerEmail: "ada@example.com",
        clientReference: `int64-${++seq}`,
        settlementAccounts: [{ settlementAccountId: "sa_x", splitAmount: "0x01" }],
      });
      const outcome = await protocol.call(server, createPath, body);
      assert.deepEqual([outcome.code, outcome.message], ["InvalidArgument", "settlementAccounts[0].splitAmount must be an integer"]);
    });

    it(`refuses a pageSize (int32) of "0x10" over ${protocol.name}`, async () => {
      const outcome = await protocol.call(server, listPath, JSON.stringify({ pageSize: "0x10" }));
      assert.deepEqual([outcome.code, outcome.message], ["InvalidArgument", "pageSize must be an integer"]);
    });

    it(`still takes decimal strings over ${protocol.name}: amount "500", pageSize "1"`, async () => {
      const outcome = await protocol.call(server, createPath, JSON.stringify({ amount: "500", customerEmail: "ada@example.com", clientReference: `int64-${++seq}` }));
      assert.equal(outcome.code, "OK", outcome.message);
      const list = await protocol.call(server, listPath, JSON.stringify({ pageSize: "1" }));
      assert.equal(list.code, "OK", list.message);
    });
  }
});

interface DuplicateCase {
  name: string;
  json: string;
  message: string;
}

const duplicateCreates: DuplicateCase[] = [
  {
    name: "a top-level key",
    json: '{"amount":500,"customerEmail":"ada@example.com","clientReference":"dup-1","amount":1}',
    message: "amount is given more than once",
  },
  {
    name: "a key spelled once plainly and once with an escape",
    json: '{"amount":500,"customerEmail":"ada@example.com","clientReference":"dup-2","cust\\u006fmerEmail":"eve@example.com"}',
    message: "customerEmail is given more than once",
  },
  {
    name: "a key inside the second split",
    json: '{"amount":500,"customerEmail":"ada@example.com","clientReference":"dup-3","settlementAccounts":[{"settlementAccountId":"sa_a","splitAmount":1},{"settlementAccountId":"sa_b","splitAmount":1,"splitAmount":400}]}',
    message: "settlementAccounts[1].splitAmount is given more than once",
  },
];

// Fails on e1d5b66: REST kept the last value of a repeated key (201); Connect refused it with protobuf-es' text, naming no path.
describe("duplicate keys in a JSON body", () => {
  let server: TestServer;

  before(async () => {
    server = await startTestServer({ store: "memory" });
  });
  after(() => server.close());

  for (const c of duplicateCreates) {
    it(`refuses ${c.name} over REST with 400 "${c.message}"`, async () => {
      const res = await rest(server, "POST", "/v2/payment-intents", c.json);
      assert.equal(res.status, 400);
      assert.deepEqual(JSON.parse(res.body.toString()), { status: 400, title: "Bad Request", message: c.message });
    });
    for (const protocol of jsonProtocols) {
      it(`refuses ${c.name} over ${protocol.name} with InvalidArgument "${c.message}"`, async () => {
        const outcome = await protocol.call(server, createPath, c.json);
        assert.deepEqual([outcome.code, outcome.message], ["InvalidArgument", c.message]);
      });
    }
  }

  it("refuses a repeated key in a settlement account over REST, naming it", async () => {
    const res = await rest(server, "POST", "/v2/settlement-accounts", '{"accountName":"Ada","accountNumber":"0123456789","bankName":"B","bankCode":"058","accountNumber":"9876543210"}');
    assert.deepEqual([res.status, JSON.parse(res.body.toString()).message], [400, "accountNumber is given more than once"]);
  });

  it("refuses the same field under its JSON and its proto name over Connect", async () => {
    const outcome = await jsonProtocols[0]!.call(server, createPath, '{"amount":500,"customerEmail":"ada@example.com","clientReference":"a","client_reference":"b"}');
    assert.deepEqual([outcome.code, outcome.message], ["InvalidArgument", "client_reference is given more than once"]);
  });

  it("stored none of them", async () => {
    assert.deepEqual(await server.intents.list({ livemode: false, merchantId: "merchantA", limit: 10, now: new Date() }), []);
    assert.deepEqual(await server.accounts.listByMerchant({ livemode: false, merchantId: "merchantA", limit: 100 }), []);
  });
});
