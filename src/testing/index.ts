/**
 * payment-intents/testing: the sandbox for an integrator's Node test suite.
 *
 *   import { startTestServer } from "payment-intents/testing";
 *   const server = await startTestServer();
 *   // ... create intents at server.baseUrl with server.apiKey, pay them with server.helpers.pay(id, "succeeded")
 *   await server.close();
 */
export { startTestServer, type TestServer, type TestServerOptions } from "./start-test-server.js";
export { TestHelperError, type AsMerchant, type TestHelpers } from "./test-helper-client.js";
export type {
  ErrorJson,
  PaymentAttemptJson,
  PaymentIntentJson,
  PaymentMethodJson,
  SettlementAccountJson,
  TestMerchantJson,
  TestPaymentJson,
} from "./rest-json.js";
export type { SettingName } from "../config.js";
