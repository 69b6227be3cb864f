/** Protocol is how a request reached the service. "http" is a plain HTTP route (pages, health, metrics). */
export type Protocol = "rest" | "connect" | "grpc" | "grpc-web" | "http";

/** The route label of a request no route serves: a constant, so unknown paths cannot grow the metrics. */
export const unmatchedRoute = "(unmatched)";
/** The route label of a plain HTTP route that has no name. */
export const unnamedRoute = "(unnamed)";

/**
 * RequestContext is what the service learns about one request while serving
 * it, on every protocol: the dispatcher fills in the protocol and route as it
 * routes, the pipeline the merchant once the key is verified, and the
 * protocol writer the status code it sent. The request log line and the
 * metrics read it once, when the response is done; nothing is re-derived
 * after dispatch.
 */
export interface RequestContext {
  readonly requestId: string;
  /** performance.now() when the request arrived. */
  readonly startedAt: number;
  /** The HTTP method as received. */
  readonly method: string;
  protocol: Protocol;
  /**
   * A bounded label: the REST route template ("/v2/payment-intents/{id}"),
   * the RPC procedure ("/payments.v2.PaymentIntentService/GetPaymentIntent"),
   * the plain route's name, or unmatchedRoute. Never a raw path, which could
   * carry ids, tokens or anything a client makes up.
   */
  route: string;
  /** Set once the API key has been verified. */
  merchantId: string | undefined;
  /** RPC only: "OK" or the Code name the client received. */
  code: string | undefined;
  /** Response headers a handler adds (idempotent-replayed, retry-after), written by the protocol. */
  responseHeaders: Record<string, string> | undefined;
  /** The client's deadline (epoch ms) from grpc-timeout or connect-timeout-ms. */
  deadline: number | undefined;
  /** The connection's remote address, for per-client limits. */
  readonly clientAddress: string | undefined;
  /** Set when the response was never completed because the client went away. */
  clientGone: boolean;
  /** Set when an error code that says the service failed (Internal) was the client's doing: logged at info. */
  clientFault?: boolean;
}

/** createRequestContext starts the context of one request. */
export function createRequestContext(requestId: string, method: string, clientAddress: string | undefined): RequestContext {
  return {
    requestId,
    startedAt: performance.now(),
    method,
    protocol: "rest",
    route: unmatchedRoute,
    merchantId: undefined,
    code: undefined,
    responseHeaders: undefined,
    deadline: undefined,
    clientAddress,
    clientGone: false,
  };
}

/**
 * The response header that marks an idempotent replay. RPC clients read it as
 * response metadata; REST answers 200 instead of 201 when it is set.
 */
export const idempotentReplayedHeader = "idempotent-replayed";

/** setResponseHeader records a header for the protocol to write with the response. */
export function setResponseHeader(context: RequestContext, name: string, value: string): void {
  (context.responseHeaders ??= {})[name] = value;
}
