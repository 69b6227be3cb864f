import type { HttpRoute } from "../server/http-route.js";
import { pathOf } from "../server/http-route.js";
import type { NodeRequest } from "../server/node-http.js";
import type { RouteTable } from "../transport/rest/route-table.js";

/** Protocol is how a request reached the service. "http" is a plain HTTP route (pages, health, metrics). */
export type Protocol = "rest" | "connect" | "grpc" | "grpc-web" | "http";

/** The route label of a request no route serves: a constant, so unknown paths cannot grow the metrics. */
export const unmatchedRoute = "(unmatched)";
/** The route label of a plain HTTP route that has no name. */
export const unnamedRoute = "(unnamed)";

/** RequestKind is a request's protocol and route, as logs and metrics label it. */
export interface RequestKind {
  protocol: Protocol;
  /**
   * A bounded label: the REST route template ("/v2/payment-intents/{id}"),
   * the RPC procedure ("/payments.v2.PaymentIntentService/GetPaymentIntent"),
   * the plain route's name, or unmatchedRoute. Never a raw path, which could
   * carry ids, tokens or anything a client makes up.
   */
  route: string;
}

export interface RequestClassifierOptions {
  /** Paths served by the RPC router: "/<service typeName>/<method name>". */
  procedures: Iterable<string>;
  httpRoutes: readonly HttpRoute[];
  restRoutes: RouteTable;
  basePath: string;
}

/**
 * createRequestClassifier labels a request the way createHandler dispatches
 * it: a registered procedure is RPC (its protocol read from the Content-Type,
 * as connect-node negotiates it), else the first plain HTTP route that
 * matches, else the REST gateway.
 */
export function createRequestClassifier(options: RequestClassifierOptions): (req: NodeRequest) => RequestKind {
  const procedures = new Set(options.procedures);
  const { basePath, restRoutes, httpRoutes } = options;
  return (req) => {
    const path = pathOf(req.url);
    if (procedures.has(path)) return { protocol: rpcProtocolOf(req.headers["content-type"]), route: path };
    const httpRoute = httpRoutes.find((route) => route.matches(path));
    if (httpRoute) return { protocol: "http", route: httpRoute.name ?? unnamedRoute };
    const relative = basePath === "" ? path : path.startsWith(`${basePath}/`) ? path.slice(basePath.length) : undefined;
    const template = relative === undefined ? undefined : restTemplateOf(restRoutes, relative);
    return { protocol: "rest", route: template ?? unmatchedRoute };
  };
}

/** The template of the REST route whose path matches, whatever the method (a 405 still has a route). */
function restTemplateOf(routes: RouteTable, path: string): string | undefined {
  return routes.routes.find((route) => route.path.match(path) !== undefined)?.path.template;
}

function rpcProtocolOf(contentType: string | undefined): Protocol {
  const type = (contentType ?? "").toLowerCase();
  if (type.startsWith("application/grpc-web")) return "grpc-web";
  if (type.startsWith("application/grpc")) return "grpc";
  return "connect";
}
