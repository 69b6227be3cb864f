/**
 * StoreHealth is the port the readiness check asks whether storage can serve
 * requests now. It is separate from the data ports so that a probe never
 * reads or writes business data.
 */
export interface StoreHealth {
  /** Resolves when storage answers; rejects (with the cause) when it does not. */
  ping(): Promise<void>;
}
