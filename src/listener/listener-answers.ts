import { STATUS_CODES } from "node:http";
import type net from "node:net";
import { requestIdHeader } from "../observability/request-id.js";
import { errorBody } from "../http/http-status.js";
import type { NodeResponse } from "../http/node-http.js";

/**
 * The headers of every answer the listener writes itself: the service's
 * error shape, the request id and no caching, like any handler error
 * (README, Errors and limits; Observability).
 */
function answerHeaders(status: number, message: string, requestId: string) {
  const body = JSON.stringify(errorBody(status, message));
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
    "cache-control": "no-store",
    [requestIdHeader]: requestId,
  };
  return { body, headers };
}

/**
 * answerRequest answers a request Node parsed but the handler must not see.
 * On HTTP/1.1 the connection closes after the answer (`Connection: close`):
 * the listener answers requests it cannot trust the connection after (no
 * Host, an unmet expectation whose body may follow, one pipelined request
 * too many).
 */
export function answerRequest(res: NodeResponse, status: number, message: string, requestId: string): void {
  const { body, headers } = answerHeaders(status, message, requestId);
  if ("shouldKeepAlive" in res) headers["connection"] = "close";
  res.writeHead(status, headers);
  res.end(body);
}

/**
 * writeRawAnswer writes a whole HTTP/1.1 answer on a socket no HTTP server
 * writes to any more (a parser error, CONNECT), then closes gracefully:
 * destroying a socket with unread bytes (the rest of a body) resets the
 * connection, and the client may lose the answer. What still comes is read
 * and dropped for up to a second after the answer.
 */
export function writeRawAnswer(socket: net.Socket, status: number, message: string, requestId: string): void {
  const { body, headers } = answerHeaders(status, message, requestId);
  const head = Object.entries({ ...headers, connection: "close" })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  socket.removeAllListeners("data");
  socket.on("data", () => {});
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${head}\r\n${body}`);
  socket.resume();
  setTimeout(() => socket.destroy(), 1000).unref();
}
