import type { HttpRoute } from "../http/http-route.js";
import type { NodeHandler, NodeRequest, NodeServerResponse } from "../http/node-http.js";
import { errorReplyOf, requestIdHeader, writeError } from "../http/write-json.js";
import type { Logger } from "../lib/logger.js";
import { chooseRequestId } from "../observability/request-id.js";
import type { RequestObserver } from "../observability/request-observer.js";
import type { Pipeline } from "../pipeline/pipeline.js";
import type { Procedure } from "../pipeline/procedure.js";
import { createRequestContext, unnamedRoute, type RequestContext } from "../http/request-context.js";
import { rpcMethods, type Cors } from "./cors.js";
import type { RestProtocol } from "./rest/rest-protocol.js";
import type { RouteTable } from "./rest/route-table.js";
import { protocolLabelOf, rpcFormatOf, type RpcFormat } from "./rpc/rpc-content-type.js";
import { clientAddressOf } from "../http/client-address.js";
import type { RpcServer } from "./rpc/rpc-server.js";

export interface DispatcherOptions {
  /** Every RPC, by path: the API's and the tools' (health, reflection). */
  procedures: readonly Procedure[];
  /** Plain HTTP routes, tried in order after the RPC paths and before the REST routes. */
  httpRoutes: readonly HttpRoute[];
  restRoutes: RouteTable;
  rest: RestProtocol;
  rpc: RpcServer;
  pipeline: Pipeline;
  /** REST mount point, "/v1" by default in the configuration; "" mounts at the root. */
  basePath: string;
  observer: RequestObserver;
  logger: Logger;
  /** Set when CORS_ALLOWED_ORIGINS allows browser origins. */
  cors?: Cors;
  /** Plain routes any origin may read whenever CORS is on (the OpenAPI document). */
  publicPaths?: readonly string[];
}

/**
 * A "." or ".." path segment, plain or percent-encoded. URL parsers resolve
 * them ("/v1/v2/payment-intents/%2e%2e/settlement-accounts" becomes the
 * accounts list); this service routes on exactly the path it logs, so such a
 * target is no route at all.
 */
const dotSegment = /(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)/i;

/**
 * An RPC path: /package.Service/Method. No REST route has this shape (a
 * REST path's first segment never holds a dot), so a POST here in an RPC
 * Content-Type is a call to a method this service lacks.
 */
const rpcPath = /^\/[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+\/[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * createDispatcher builds the one request handler behind the port. It reads
 * each request once to decide where it goes — an RPC path (gRPC, gRPC-Web or
 * Connect, by Content-Type), a plain HTTP route, or a REST route under the
 * base path — and records the protocol and route label as it decides, so the
 * log line and metrics need no second look. Method and CORS handling are
 * answered here, the same way for every route: 405 always carries Allow,
 * HEAD is served wherever GET is, OPTIONS is a preflight when CORS allows the
 * origin and a 405 otherwise.
 */
export function createDispatcher(options: DispatcherOptions): NodeHandler {
  const { basePath, restRoutes, observer, cors } = options;
  const procedures = new Map(options.procedures.map((p) => [p.path, p]));
  const publicPaths = new Set(options.publicPaths ?? []);

  function refuse(res: NodeServerResponse, context: RequestContext, status: number, message: string, headers: Record<string, string> = {}) {
    writeError(res, context.requestId, { status, message, headers });
  }

  /** No route: an allowed origin may still read the 404, as any other error. */
  function notFound(req: NodeRequest, res: NodeServerResponse, context: RequestContext, path: string) {
    cors?.decorate(req, res);
    refuse(res, context, 404, `no route for ${path}${basePathHint(req, path)}`);
  }

  /**
   * A path that would be a route under BASE_PATH (/v2/payment-intents sent
   * to a service mounted at /v1) says so: the contract's {base_url} already
   * carries a version segment, which a newcomer easily leaves out.
   */
  function basePathHint(req: NodeRequest, path: string): string {
    if (basePath === "" || path.startsWith(`${basePath}/`)) return "";
    const method = req.method === "HEAD" ? "GET" : (req.method ?? "");
    if (restRoutes.match(method, path).kind === "not-found") return "";
    return `: the REST API is under BASE_PATH ${basePath}, as in ${basePath}${path}`;
  }

  function methodNotAllowed(req: NodeRequest, res: NodeServerResponse, context: RequestContext, path: string, allow: readonly string[]) {
    refuse(res, context, 405, `${req.method} is not allowed on ${path}`, { allow: allow.join(", ") });
  }

  function serveRpc(req: NodeRequest, res: NodeServerResponse, context: RequestContext, procedure: Procedure, path: string) {
    context.route = path;
    const contentType = req.headers["content-type"];
    context.protocol = protocolLabelOf(contentType);
    if (cors?.handle(req, res, rpcMethods)) return;
    if (req.method !== "POST") return methodNotAllowed(req, res, context, path, ["POST"]);
    const format = rpcFormatOf(contentType);
    if (!format) return refuse(res, context, 415, "Content-Type must name an RPC protocol: application/grpc, application/grpc-web(-text), application/json, application/proto or application/connect+(json|proto)");
    if (procedure.method.methodKind === "bidi_streaming" && req.httpVersionMajor < 2) {
      // A full-duplex call cannot work over HTTP/1.1; close so a client coded to expect one does not hang.
      return refuse(res, context, 505, `${procedure.method.name} streams both ways and needs HTTP/2`, { connection: "close" });
    }
    options.rpc.serve(req, res, context, procedure, format).catch((error: unknown) => internalFailure(res, context, error));
  }

  /**
   * A call to a method this service does not have: gRPC and gRPC-Web answer
   * grpc-status 12 as their clients expect, Connect its unimplemented error
   * (HTTP 404), never the REST 404 body a gRPC client cannot read.
   */
  function serveUnknownRpc(req: NodeRequest, res: NodeServerResponse, context: RequestContext, path: string, format: RpcFormat) {
    context.protocol = format.protocol;
    cors?.decorate(req, res);
    options.rpc.unimplemented(res, context, path, format);
  }

  function servePlain(req: NodeRequest, res: NodeServerResponse, context: RequestContext, route: HttpRoute, path: string) {
    context.protocol = "http";
    context.route = route.name ?? unnamedRoute;
    if (route.methods) {
      const allowed = route.methods.includes("GET") && !route.methods.includes("HEAD") ? [...route.methods, "HEAD"] : route.methods;
      if (cors?.handle(req, res, allowed, publicPaths.has(path))) return;
      if (!allowed.includes(req.method ?? "")) return methodNotAllowed(req, res, context, path, allowed);
    }
    Promise.resolve()
      .then(() => route.handle(req, res, context))
      .catch((error: unknown) => {
        // The route's name, never the path: a path may carry a checkout token.
        options.logger.error({ requestId: context.requestId, method: req.method, route: context.route, err: describeError(error) }, "unexpected error in HTTP route");
        if (res.headersSent) return void res.destroy();
        refuse(res, context, 500, "internal error");
      });
  }

  function serveRest(req: NodeRequest, res: NodeServerResponse, context: RequestContext, path: string, query: string) {
    const relative = basePath === "" ? path : path.startsWith(basePath) && path.charCodeAt(basePath.length) === 0x2f ? path.slice(basePath.length) : undefined;
    if (relative === undefined) return notFound(req, res, context, path);
    const method = req.method === "HEAD" ? "GET" : (req.method ?? "");
    const match = restRoutes.match(method, relative);
    if (match.kind === "not-found") return notFound(req, res, context, path);
    context.route = match.template;
    if (match.kind === "method-not-allowed") {
      if (cors?.handle(req, res, match.allow)) return;
      return methodNotAllowed(req, res, context, path, match.allow);
    }
    cors?.handle(req, res, match.allow);
    options.rest.serve(req, res, context, match.route, match.pathValues, query).catch((error: unknown) => internalFailure(res, context, error));
  }

  /** A protocol that failed outside the pipeline's guard: logged once, answered 500 when still possible. */
  function internalFailure(res: NodeServerResponse, context: RequestContext, error: unknown) {
    const mapped = options.pipeline.failure(context, error);
    if (res.headersSent) return void res.destroy();
    writeError(res, context.requestId, errorReplyOf(mapped));
  }

  return (req, res) => {
    const response = res as NodeServerResponse;
    const context = createRequestContext(chooseRequestId(req.headers[requestIdHeader]), req.method ?? "", clientAddressOf(req.socket));
    const target = req.url ?? "/";
    observer.track(context, response, target);
    // Every answer carries the id, CORS preflights included: set before any protocol writes.
    response.setHeader(requestIdHeader, context.requestId);
    const queryAt = target.indexOf("?");
    const path = queryAt < 0 ? target : target.slice(0, queryAt);
    if (dotSegment.test(path)) return notFound(req, response, context, path);

    const procedure = procedures.get(path);
    if (procedure) return serveRpc(req, response, context, procedure, path);
    if (req.method === "POST" && rpcPath.test(path)) {
      const format = rpcFormatOf(req.headers["content-type"]);
      if (format) return serveUnknownRpc(req, response, context, path, format);
    }
    for (const route of options.httpRoutes) {
      if (route.matches(path)) return servePlain(req, response, context, route, path);
    }
    serveRest(req, response, context, path, queryAt < 0 ? "" : target.slice(queryAt + 1));
  };
}

function describeError(error: unknown): unknown {
  return error instanceof Error ? { message: error.message, stack: error.stack } : String(error);
}
