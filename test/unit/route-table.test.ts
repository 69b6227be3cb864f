import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PaymentIntentService } from "../../gen/payments/v2/payment_intent_pb.js";
import { SettlementAccountService } from "../../gen/payments/v2/settlement_account_pb.js";
import { createRouteTable } from "../../src/protocols/rest/route-table.js";

type Want =
  | { found: string; pathValues?: Record<string, string> }
  | { allow: string[] }
  | "not-found";

describe("createRouteTable", () => {
  const table = createRouteTable([PaymentIntentService, SettlementAccountService]);

  it("holds exactly the routes the proto declares", () => {
    const routes = table.routes.map((r) => `${r.httpMethod} ${r.path.template} -> ${r.service.name}.${r.method.name} body=${JSON.stringify(r.body)}`);
    assert.deepEqual(routes.sort(), [
      'DELETE /v2/payment-intents/{id} -> PaymentIntentService.DeletePaymentIntent body=""',
      'GET /v2/payment-intents -> PaymentIntentService.ListPaymentIntents body=""',
      'GET /v2/payment-intents/{id} -> PaymentIntentService.GetPaymentIntent body=""',
      'GET /v2/settlement-accounts -> SettlementAccountService.ListSettlementAccounts body=""',
      'POST /v2/payment-intents -> PaymentIntentService.CreatePaymentIntent body="*"',
      'POST /v2/settlement-accounts -> SettlementAccountService.CreateSettlementAccount body="*"',
    ]);
  });

  const cases: { method: string; path: string; want: Want }[] = [
    { method: "POST", path: "/v2/payment-intents", want: { found: "CreatePaymentIntent" } },
    { method: "GET", path: "/v2/payment-intents", want: { found: "ListPaymentIntents" } },
    { method: "GET", path: "/v2/payment-intents/pi_1", want: { found: "GetPaymentIntent", pathValues: { id: "pi_1" } } },
    { method: "DELETE", path: "/v2/payment-intents/pi_1", want: { found: "DeletePaymentIntent", pathValues: { id: "pi_1" } } },
    { method: "DELETE", path: "/v2/payment-intents/a%2Fb", want: { found: "DeletePaymentIntent", pathValues: { id: "a/b" } } },
    { method: "POST", path: "/v2/settlement-accounts", want: { found: "CreateSettlementAccount" } },
    { method: "GET", path: "/v2/settlement-accounts", want: { found: "ListSettlementAccounts" } },
    { method: "PUT", path: "/v2/payment-intents", want: { allow: ["GET", "HEAD", "POST"] } },
    { method: "DELETE", path: "/v2/payment-intents", want: { allow: ["GET", "HEAD", "POST"] } },
    { method: "PATCH", path: "/v2/payment-intents/pi_1", want: { allow: ["DELETE", "GET", "HEAD"] } },
    { method: "POST", path: "/v2/payment-intents/pi_1", want: { allow: ["DELETE", "GET", "HEAD"] } },
    { method: "DELETE", path: "/v2/settlement-accounts", want: { allow: ["GET", "HEAD", "POST"] } },
    { method: "GET", path: "/v2/settlement-accounts/sa_1", want: "not-found" },
    { method: "DELETE", path: "/v2/settlement-accounts/sa_1", want: "not-found" },
    { method: "GET", path: "/v2/payment-intents/", want: "not-found" },
    { method: "GET", path: "/v2/payment-intents/pi_1/extra", want: "not-found" },
    { method: "GET", path: "/v2/payment-intents/pi_1/", want: "not-found" },
    { method: "GET", path: "/v2/payment-intent", want: "not-found" },
    { method: "GET", path: "/v2", want: "not-found" },
    { method: "GET", path: "/", want: "not-found" },
    { method: "GET", path: "/v1/v2/payment-intents", want: "not-found" },
    { method: "POST", path: "/payments.v2.PaymentIntentService/CreatePaymentIntent", want: "not-found" },
  ];
  for (const { method, path, want } of cases) {
    const label = want === "not-found" ? "404" : "found" in want ? want.found : `405 allow ${want.allow.join(", ")}`;
    it(`${method} ${path} -> ${label}`, () => {
      const match = table.match(method, path);
      if (want === "not-found") {
        assert.deepEqual(match, { kind: "not-found" });
      } else if ("found" in want) {
        assert.equal(match.kind, "found");
        assert.ok(match.kind === "found");
        assert.equal(match.route.method.name, want.found);
        assert.equal(match.route.httpMethod, method);
        assert.deepEqual(match.pathValues, want.pathValues ?? {});
      } else {
        assert.equal(match.kind, "method-not-allowed");
        assert.ok(match.kind === "method-not-allowed");
        assert.deepEqual([...match.allow].sort(), want.allow);
      }
    });
  }
});
