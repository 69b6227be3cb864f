import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compilePathTemplate } from "../../src/protocols/rest/path-template.js";

describe("compilePathTemplate", () => {
  const cases: { template: string; path: string; want: Record<string, string> | undefined }[] = [
    { template: "/v2/payment-intents", path: "/v2/payment-intents", want: {} },
    { template: "/v2/payment-intents", path: "/v2/payment-intents/", want: undefined },
    { template: "/v2/payment-intents", path: "/v2/payment-intent", want: undefined },
    { template: "/v2/payment-intents", path: "/V2/payment-intents", want: undefined },
    { template: "/v2/payment-intents", path: "v2/payment-intents", want: undefined },
    { template: "/v2/payment-intents", path: "//v2/payment-intents", want: undefined },
    { template: "/v2/payment-intents/{id}", path: "/v2/payment-intents/pi_1", want: { id: "pi_1" } },
    { template: "/v2/payment-intents/{id=*}", path: "/v2/payment-intents/pi_1", want: { id: "pi_1" } },
    { template: "/v2/payment-intents/{id}", path: "/v2/payment-intents/a%2Fb%20c", want: { id: "a/b c" } },
    { template: "/v2/payment-intents/{id}", path: "/v2/payment-intents/%E2%82%A6", want: { id: "₦" } },
    { template: "/v2/payment-intents/{id}", path: "/v2/payment-intents/%E2%82", want: undefined },
    { template: "/v2/payment-intents/{id}", path: "/v2/payment-intents/%zz", want: undefined },
    { template: "/v2/payment-intents/{id}", path: "/v2/payment-intents/", want: undefined },
    { template: "/v2/payment-intents/{id}", path: "/v2/payment-intents", want: undefined },
    { template: "/v2/payment-intents/{id}", path: "/v2/payment-intents/a/b", want: undefined },
    { template: "/v2/payment-intents/{id}", path: "/v2/payment-intents/a/", want: undefined },
    { template: "/v2/payment-intents/{id}", path: "/v2/settlement-accounts/a", want: undefined },
    { template: "/v2/{parent}/items/{item_id}", path: "/v2/p1/items/i2", want: { parent: "p1", item_id: "i2" } },
    { template: "/v2/{parent}/items/{item_id}", path: "/v2/p1/things/i2", want: undefined },
  ];
  for (const { template, path, want } of cases) {
    it(`${template} ${want ? "matches" : "does not match"} ${path}`, () => {
      assert.deepEqual(compilePathTemplate(template).match(path), want);
    });
  }

  it("lists the variables in order", () => {
    assert.deepEqual(compilePathTemplate("/v2/{parent}/items/{item_id=*}").variables, ["parent", "item_id"]);
    assert.deepEqual(compilePathTemplate("/v2/payment-intents").variables, []);
  });

  const unsupported = ["v2/payment-intents", "/v2/{name=**}", "/v2/{name=items/*}", "/v2/items:cancel", "/v2/{Name}", "/v2//items", "/v2/items/"];
  for (const template of unsupported) {
    it(`refuses the template ${template} at compile time`, () => {
      assert.throws(() => compilePathTemplate(template), Error);
    });
  }
});
