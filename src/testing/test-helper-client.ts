import type { ErrorJson, PaymentIntentJson, TestMerchantJson, TestPaymentJson } from "./rest-json.js";

/** Whose key a helper call uses: the test server's merchant unless apiKey is given. */
export interface AsMerchant {
  apiKey?: string;
}

/**
 * TestHelpers call the REST test helpers of one test server, so a suite does
 * in one line what its HTTP client would otherwise do in five. Each call is a
 * real request: what they do is what the documented routes do.
 */
export interface TestHelpers {
  /** POST /v2/test-helpers/merchants: a fresh merchant with its own key, e.g. one per test. */
  createMerchant(name?: string): Promise<TestMerchantJson>;
  /** POST /v2/test-helpers/payment-intents/{id}/attempts: pays as the hosted checkout does; paymentMethod defaults to the intent's first. */
  pay(intentId: string, outcome: "succeeded" | "declined" | "processing", paymentMethod?: string, as?: AsMerchant): Promise<TestPaymentJson>;
  /** POST /v2/test-helpers/payment-attempts/{id}/settle: the processor's later answer for an attempt left processing. */
  settle(attemptId: string, outcome: "succeeded" | "declined", as?: AsMerchant): Promise<TestPaymentJson>;
  /** POST /v2/test-helpers/payment-intents/{id}/expire: as if CHECKOUT_TTL had passed. */
  expire(intentId: string, as?: AsMerchant): Promise<PaymentIntentJson>;
  /** POST /v2/test-helpers/clock/advance: moves the service's clock forward by whole seconds. */
  advanceClock(seconds: number, as?: AsMerchant): Promise<{ now: string }>;
}

/**
 * TestHelperError is a helper call the service refused: status is the HTTP
 * status and body the {status, title, message} it answered with.
 */
export class TestHelperError extends Error {
  override readonly name = "TestHelperError";
  constructor(
    readonly status: number,
    readonly body: ErrorJson,
    request: string,
  ) {
    super(`${request} answered ${status} ${body.title}: ${body.message}`);
  }
}

/** createTestHelperClient binds the helpers to a server's REST root and its merchant's key. */
export function createTestHelperClient(baseUrl: string, apiKey: string): TestHelpers {
  async function call<T>(method: string, path: string, key: string | undefined, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {};
    if (key !== undefined) headers.authorization = `Bearer ${key}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(`${baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = (await res.json()) as unknown;
    if (!res.ok) throw new TestHelperError(res.status, json as ErrorJson, `${method} ${path}`);
    return json as T;
  }
  const intentPath = (id: string) => `/v2/test-helpers/payment-intents/${encodeURIComponent(id)}`;

  return {
    createMerchant: (name) => call("POST", "/v2/test-helpers/merchants", undefined, name === undefined ? {} : { name }),
    pay: (intentId, outcome, paymentMethod, as) =>
      call("POST", `${intentPath(intentId)}/attempts`, as?.apiKey ?? apiKey, paymentMethod === undefined ? { outcome } : { paymentMethod, outcome }),
    settle: (attemptId, outcome, as) => call("POST", `/v2/test-helpers/payment-attempts/${encodeURIComponent(attemptId)}/settle`, as?.apiKey ?? apiKey, { outcome }),
    expire: (intentId, as) => call("POST", `${intentPath(intentId)}/expire`, as?.apiKey ?? apiKey),
    advanceClock: (seconds, as) => call("POST", "/v2/test-helpers/clock/advance", as?.apiKey ?? apiKey, { seconds }),
  };
}
