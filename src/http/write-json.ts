import { Code, ConnectError } from "@connectrpc/connect";
import { errorBody, httpStatusOf } from "./http-status.js";
import { HttpRefusal } from "./http-refusal.js";
import type { NodeResponse } from "./node-http.js";
import { BodyTooLarge } from "./read-body.js";

/** The header a request id is echoed in, on every protocol. */
export const requestIdHeader = "x-request-id";

/**
 * writeJson writes one complete JSON response with the headers every JSON
 * answer of the service carries: its length, no caching, and the request id.
 */
export function writeJson(
  res: NodeResponse,
  requestId: string,
  status: number,
  body: string,
  headers?: Readonly<Record<string, string>>,
): void {
  res.writeHead(status, {
    ...headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
    [requestIdHeader]: requestId,
  });
  res.end(body);
}

/** ErrorReply is an error as the REST API answers it: status, message and extra headers. */
export interface ErrorReply {
  status: number;
  message: string;
  headers: Record<string, string>;
}

/**
 * errorReplyOf maps any failure to the REST answer: a ConnectError through the
 * one Code→HTTP table (its raw message, never the "[code]" prefix; a 500 says
 * only "internal error"), a transport refusal by its own status, anything
 * else 500. The headers a client needs to act come along: WWW-Authenticate on
 * 401 (RFC 9110 §11.6.1), Retry-After from a rate limit or an outage.
 */
export function errorReplyOf(error: unknown): ErrorReply {
  const headers: Record<string, string> = {};
  let status = 500;
  let message = "internal error";
  if (error instanceof HttpRefusal) {
    status = error.status;
    message = error.message;
    Object.assign(headers, error.headers);
  } else if (error instanceof BodyTooLarge) {
    status = 413;
    message = error.message;
  } else if (error instanceof ConnectError && error.code !== Code.Internal && error.code !== Code.Unknown) {
    status = httpStatusOf(error.code);
    if (status !== 500) message = error.rawMessage;
    const retryAfter = error.metadata.get("retry-after");
    if (retryAfter !== null) headers["retry-after"] = retryAfter;
  }
  if (status === 401) headers["www-authenticate"] = "Bearer";
  return { status, message, headers };
}

/** writeError answers with the §7 error body {status, title, message}; the one place REST errors are written. */
export function writeError(res: NodeResponse, requestId: string, reply: ErrorReply): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  writeJson(res, requestId, reply.status, JSON.stringify(errorBody(reply.status, reply.message)), reply.headers);
}
