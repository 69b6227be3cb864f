import type { Logger } from "../lib/logger.js";
import type { NodeHandler, NodeRequest, NodeResponse } from "../server/node-http.js";
import { unmatchedRoute, type Protocol, type RequestKind } from "./classify-request.js";
import { chooseRequestId, requestIdHeader } from "./request-id.js";
import type { RequestInfo, RequestScope } from "./request-scope.js";
import { watchRpcStatus } from "./rpc-status.js";

/** RequestOutcome is one finished request, as logged and counted. */
export interface RequestOutcome {
  requestId: string;
  protocol: Protocol;
  /** The HTTP method. */
  method: string;
  /** A bounded label (see RequestKind.route). */
  route: string;
  /** The HTTP status; abortedStatus when the client went away first. */
  status: number;
  /** RPC only: "OK" or the Code name the client received. */
  code?: string;
  durationMs: number;
  /** Set when the request carried a valid API key. */
  merchantId?: string;
}

/**
 * The status logged when the client closed the connection before the
 * response was complete: nginx's 499 "client closed request", a status no
 * server sends, so it cannot be mistaken for one.
 */
export const abortedStatus = 499;

/** Response methods beyond NodeResponse that both Node response types have. */
interface ObservedResponse extends NodeResponse {
  setHeader(name: string, value: string): unknown;
  readonly statusCode: number;
  once(event: "finish" | "close", listener: () => void): unknown;
  /** Set on HTTP/2 responses. */
  readonly stream?: { once(event: "finish", listener: () => void): unknown };
}

export interface ObserveRequestsOptions {
  /** Writes the one line per request; the lines of errors come from elsewhere, through a scoped logger. */
  logger: Logger;
  scope: RequestScope;
  classify(req: NodeRequest): RequestKind;
  /** Told of every finished request (metrics). Must not throw. */
  onRequestEnd?: (outcome: RequestOutcome) => void;
  /** Makes request ids for requests without a sane one; random UUIDs by default. */
  generateRequestId?: () => string;
}

/**
 * observeRequests wraps the one request handler so that every request, on
 * every protocol, gets a request id (the caller's X-Request-Id when sane, else
 * a new one), echoed as a response header before anything else is written,
 * runs inside the request scope, and ends in exactly one log line and one
 * onRequestEnd call. Server errors (5xx) log at error level, the rest at info.
 */
export function observeRequests(handler: NodeHandler, options: ObserveRequestsOptions): NodeHandler {
  return (req, res) => {
    const started = performance.now();
    const info: RequestInfo = { requestId: chooseRequestId(req.headers[requestIdHeader], options.generateRequestId) };
    const kind = options.classify(req);
    const response = res as ObservedResponse;
    // Set before the handler runs: every writeHead after this merges it in.
    response.setHeader(requestIdHeader, info.requestId);
    const rpcStatus = kind.protocol === "rest" || kind.protocol === "http" ? undefined : watchRpcStatus(res, kind.protocol);

    let done = false;
    const finish = (completed: boolean) => {
      if (done) return;
      done = true;
      const outcome: RequestOutcome = {
        requestId: info.requestId,
        protocol: kind.protocol,
        method: req.method ?? "",
        route: kind.route,
        status: completed ? response.statusCode : abortedStatus,
        durationMs: Math.round((performance.now() - started) * 1000) / 1000,
      };
      const code = rpcStatus?.();
      if (code !== undefined) outcome.code = code;
      if (info.merchantId !== undefined) outcome.merchantId = info.merchantId;
      log(options.logger, outcome, kind.route === unmatchedRoute ? req.url : undefined);
      options.onRequestEnd?.(outcome);
    };
    response.once("finish", () => finish(true));
    response.once("close", () => finish(false));
    // Over HTTP/2 the response's "finish" waits for the whole stream to close,
    // which a client that stops sending an oversized body never lets happen;
    // the response is complete once the stream's writable side has finished.
    response.stream?.once("finish", () => finish(true));

    options.scope.run(info, () => handler(req, res));
  };
}

function log(logger: Logger, outcome: RequestOutcome, unmatchedTarget: string | undefined): void {
  const fields: Record<string, unknown> = { ...outcome };
  // An unmatched path is what an operator needs to see; the query never is.
  if (unmatchedTarget !== undefined) fields["path"] = unmatchedTarget.split("?", 1)[0]!.slice(0, 256);
  const message = outcome.status === abortedStatus ? "request aborted" : "request";
  if (outcome.status >= 500 && outcome.status !== abortedStatus) logger.error(fields, message);
  else logger.info(fields, message);
}
