import type { Logger } from "../lib/logger.js";
import type { NodeServerResponse } from "../http/node-http.js";
import { unmatchedRoute, type Protocol, type RequestContext } from "../http/request-context.js";

/** RequestOutcome is one finished request, as logged and counted. */
export interface RequestOutcome {
  requestId: string;
  protocol: Protocol;
  /** The HTTP method. */
  method: string;
  /** A bounded label (see RequestContext.route). */
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

export interface RequestObserverOptions {
  /** Writes the one line per request. */
  logger: Logger;
  /** Told of every finished request (metrics). Must not throw. */
  onRequestEnd?: (outcome: RequestOutcome) => void;
}

/**
 * RequestObserver ends every request, on every protocol, in exactly one log
 * line and one onRequestEnd call, from what the dispatcher, the pipeline and
 * the protocol wrote into its context. Server errors (5xx) log at error
 * level, the rest (499 included) at info.
 */
export interface RequestObserver {
  /** Watches the response of a request until it completes or the client goes away. */
  track(context: RequestContext, res: NodeServerResponse, target: string | undefined): void;
  /** Ends a request that never reached a response object (refused by the listener itself). */
  end(context: RequestContext, status: number, target: string | undefined): void;
  /**
   * Logs and counts a request the listener answered itself (a parser error, a
   * missing Host, CONNECT, a refused pipeline, …), under the route
   * "(refused)" with the reason.
   */
  refused(event: { requestId: string; status: number; reason: string; durationMs?: number }): void;
}

/** The route label of requests the listener answered itself, before any route was looked up. */
export const refusedRoute = "(refused)";

/** RPC codes that say the service failed, not the request (gRPC answers them with HTTP 200). */
const faultCodes = new Set(["Internal", "Unknown", "DataLoss", "Unavailable"]);

/**
 * serverFault decides a request line's level: error when the service failed
 * the request (a 500 or 503, or an RPC code saying so), info otherwise. A
 * client's own deadline (504, DeadlineExceeded) or an encoding it asked for
 * and did not get (501) is not the service's fault, so a client without a key
 * cannot fill the error log at will.
 */
function serverFault(status: number, code: string | undefined): boolean {
  if (code !== undefined) return faultCodes.has(code);
  return status >= 500 && status !== 501 && status !== 504 && status !== 505;
}

const kTracked = Symbol("trackedRequest");

interface Tracked {
  context: RequestContext;
  res: NodeServerResponse;
  target: string | undefined;
  done: boolean;
}

type Carrier = { [kTracked]?: Tracked };

export function createRequestObserver(options: RequestObserverOptions): RequestObserver {
  const { logger, onRequestEnd } = options;

  function end(context: RequestContext, status: number, target: string | undefined): void {
    const outcome: RequestOutcome = {
      requestId: context.requestId,
      protocol: context.protocol,
      method: context.method,
      route: context.route,
      status,
      durationMs: Math.round((performance.now() - context.startedAt) * 1000) / 1000,
    };
    if (context.code !== undefined && status !== abortedStatus) outcome.code = context.code;
    if (context.merchantId !== undefined) outcome.merchantId = context.merchantId;
    const fields: Record<string, unknown> = { ...outcome };
    // An unmatched path is what an operator needs to see; the query never is.
    if (context.route === unmatchedRoute && target !== undefined) {
      fields["path"] = target.split("?", 1)[0]!.slice(0, 256);
    }
    if (status === abortedStatus) logger.info(fields, "request aborted");
    else if (serverFault(status, outcome.code) && !context.clientFault) logger.error(fields, "request");
    else logger.info(fields, "request");
    onRequestEnd?.(outcome);
  }

  // One listener pair per app, not per request: the request is found on the emitter.
  function finished(this: Carrier): void {
    const tracked = this[kTracked];
    if (!tracked || tracked.done) return;
    tracked.done = true;
    end(tracked.context, tracked.context.clientGone ? abortedStatus : tracked.res.statusCode, tracked.target);
  }
  function aborted(this: Carrier): void {
    const tracked = this[kTracked];
    if (tracked) tracked.context.clientGone = true;
  }
  function closed(this: Carrier): void {
    const tracked = this[kTracked];
    if (!tracked || tracked.done) return;
    tracked.done = true;
    end(tracked.context, abortedStatus, tracked.target);
  }

  return {
    end,
    refused(event) {
      const outcome: RequestOutcome = {
        requestId: event.requestId,
        protocol: "http",
        method: "",
        route: refusedRoute,
        status: event.status,
        durationMs: event.durationMs ?? 0,
      };
      const fields = { ...outcome, reason: event.reason };
      if (serverFault(event.status, undefined)) logger.error(fields, "request");
      else logger.info(fields, "request");
      onRequestEnd?.(outcome);
    },
    track(context, res, target) {
      const tracked: Tracked = { context, res, target, done: false };
      (res as Carrier)[kTracked] = tracked;
      res.once("finish", finished);
      res.once("close", closed);
      // Over HTTP/2 the response's "finish" waits for the whole stream to
      // close, which a client that stops sending an oversized body never lets
      // happen; the response is complete once the stream's writable side is.
      const stream = (res as { stream?: Carrier & { once(event: string, listener: () => void): unknown } }).stream;
      if (stream) {
        stream[kTracked] = tracked;
        // A client that resets its stream: Node ends the stream's writable
        // side at once (a "finish" that looks like a complete response) and
        // tells readers afterwards; "aborted" comes first, so the line says
        // 499, not the status the response never sent.
        stream.once("aborted", aborted);
        stream.once("finish", finished);
      }
    },
  };
}
