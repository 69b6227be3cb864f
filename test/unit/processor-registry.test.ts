import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createPaystackProcessor } from "../../src/processor/paystack/paystack-processor.js";
import { createProcessorRegistry } from "../../src/processor/processor-registry.js";
import { createTestModeProcessor } from "../../src/processor/test-mode-processor.js";

describe("createProcessorRegistry", () => {
  const paystack = createPaystackProcessor({ secretKey: "sk_test_7e57000000000000000000000000000000000001", baseUrl: "http://127.0.0.1:9", timeoutMs: 100 });
  const test = createTestModeProcessor();
  const registry = createProcessorRegistry([paystack, test]);

  const cases: { method: string; want: string }[] = [
    { method: "paystack", want: "paystack" },
    { method: "card", want: "test" },
    { method: "bank_transfer", want: "test" },
    { method: "ussd", want: "test" },
    { method: "opay", want: "test" },
  ];
  for (const { method, want } of cases) {
    it(`sends ${method} to the ${want} processor`, () => {
      assert.equal(registry.forMethod(method)?.name, want);
    });
  }

  it("finds each processor by the name stored on attempts and refunds, and none by another", () => {
    assert.equal(registry.get("paystack"), paystack);
    assert.equal(registry.get("test"), test);
    assert.equal(registry.get("flutterwave"), undefined);
    assert.deepEqual(registry.processors.map((p) => p.name), ["paystack", "test"]);
  });

  it("without Paystack, paystack has no processor but the catch-all's", () => {
    assert.equal(createProcessorRegistry([paystack]).forMethod("card"), undefined);
    assert.equal(createProcessorRegistry([test]).forMethod("paystack")?.name, "test");
  });

  it("refuses two processors of one name", () => {
    assert.throws(() => createProcessorRegistry([test, createTestModeProcessor()]), /two payment processors are named "test"/);
  });
});
