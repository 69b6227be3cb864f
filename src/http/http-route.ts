import type { RequestContext } from "./request-context.js";
import type { NodeRequest, NodeResponse } from "./node-http.js";

/**
 * HttpRoute is a plain HTTP endpoint served beside the API on the same port:
 * the checkout pages, health, metrics, the OpenAPI document. Routes are tried
 * in order before the REST gateway, which answers everything else.
 */
export interface HttpRoute {
  /**
   * A fixed label for request logs and metrics, such as "/checkout/{token}":
   * never the raw path, which may carry ids or secrets. Unnamed routes are
   * labelled "(unnamed)".
   */
  readonly name?: string;
  /**
   * The methods the route serves. When given, the dispatcher answers every
   * other method (405 with Allow, or a CORS preflight) and serves HEAD as GET
   * without a body; without it, the route sees every method itself.
   */
  readonly methods?: readonly string[];
  /** Whether this route serves the path (without the query string). */
  matches(path: string): boolean;
  /** context carries the request id for any line the route logs. */
  handle(req: NodeRequest, res: NodeResponse, context: RequestContext): void | Promise<void>;
}

/** pathOf is the path of a request target, without its query. */
export function pathOf(target: string | undefined): string {
  const path = target ?? "/";
  const queryAt = path.indexOf("?");
  return queryAt < 0 ? path : path.slice(0, queryAt);
}
