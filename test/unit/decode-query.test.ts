import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { GetPaymentIntentRequestSchema, ListPaymentIntentsRequestSchema } from "../../gen/payments/v2/payment_intent_pb.js";
import { decodeRestQuery } from "../../src/protocols/rest/decode-query.js";

const decodeList = (query: string) => decodeRestQuery(ListPaymentIntentsRequestSchema, new URLSearchParams(query), []);

describe("decodeRestQuery", () => {
  const accepted: { query: string; want: Record<string, unknown> }[] = [
    { query: "", want: {} },
    { query: "pageSize=10", want: { pageSize: 10 } },
    { query: "pageSize=007", want: { pageSize: 7 } },
    { query: "pageSize=-1", want: { pageSize: -1 } },
    { query: "pageSize=2147483647", want: { pageSize: 2147483647 } },
    { query: "pageToken=abc.def", want: { pageToken: "abc.def" } },
    { query: "clientReference=order%3A1&status=pending", want: { clientReference: "order:1", status: "pending" } },
    { query: "clientReference=", want: { clientReference: "" } },
  ];
  for (const { query, want } of accepted) {
    it(`accepts ?${query}`, () => {
      assert.deepEqual(decodeList(query), want);
    });
  }

  const refused: { query: string; message: string }[] = [
    { query: "pageSize=abc", message: "pageSize must be an integer" },
    { query: "pageSize=", message: "pageSize must be an integer" },
    { query: "pageSize=1.5", message: "pageSize must be an integer" },
    { query: "pageSize=1e2", message: "pageSize must be an integer" },
    { query: "pageSize=%2B5", message: "pageSize must be an integer" },
    { query: "pageSize=%205", message: "pageSize must be an integer" },
    { query: "pageSize=0x10", message: "pageSize must be an integer" },
    { query: "pageSize=2147483648", message: "pageSize must be an integer" },
    { query: "pageSize=99999999999", message: "pageSize must be an integer" },
    { query: "pageSize=10&pageSize=20", message: "query parameter pageSize is given more than once" },
    { query: "status=pending&status=pending", message: "query parameter status is given more than once" },
    { query: "page_size=10", message: "unknown query parameter page_size" },
    { query: "PageSize=10", message: "unknown query parameter PageSize" },
    { query: "limit=10", message: "unknown query parameter limit" },
    { query: "pageSize=10&foo=", message: "unknown query parameter foo" },
  ];
  for (const { query, message } of refused) {
    it(`refuses ?${query}`, () => {
      assert.throws(
        () => decodeList(query),
        (error: unknown) => error instanceof ConnectError && error.code === Code.InvalidArgument && error.rawMessage === message,
      );
    });
  }

  it("refuses a field bound by the path", () => {
    const run = () => decodeRestQuery(GetPaymentIntentRequestSchema, new URLSearchParams("id=pi_2"), ["id"]);
    assert.throws(run, (error: unknown) => error instanceof ConnectError && error.rawMessage === "unknown query parameter id");
    assert.deepEqual(decodeRestQuery(GetPaymentIntentRequestSchema, new URLSearchParams("id=pi_2"), []), { id: "pi_2" });
  });
});
