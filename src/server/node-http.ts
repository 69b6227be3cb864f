import type { IncomingMessage, OutgoingHttpHeaders } from "node:http";
import type { Http2ServerRequest } from "node:http2";

/** A request from Node's http or http2 server: both carry what the handlers read. */
export type NodeRequest = IncomingMessage | Http2ServerRequest;

/**
 * NodeResponse is the part of http.ServerResponse and http2.Http2ServerResponse
 * the handlers use; both satisfy it, and so does connect-node's response type.
 */
export interface NodeResponse {
  readonly headersSent: boolean;
  writeHead(status: number, headers?: OutgoingHttpHeaders): unknown;
  end(data: string): unknown;
  destroy(error?: Error): unknown;
}

/** NodeHandler serves one request on either server. */
export type NodeHandler = (req: NodeRequest, res: NodeResponse) => void;
