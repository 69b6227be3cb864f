import type { IncomingMessage, OutgoingHttpHeaders } from "node:http";
import type { Http2ServerRequest } from "node:http2";

/** A request from Node's http or http2 server: both carry what the handlers read. */
export type NodeRequest = IncomingMessage | Http2ServerRequest;


/**
 * NodeResponse is the part of http.ServerResponse and http2.Http2ServerResponse
 * plain HTTP routes use; both satisfy it.
 */
export interface NodeResponse {
  readonly headersSent: boolean;
  /** A header set so far (setHeader): what writeHead would otherwise replace, such as CORS's Vary. */
  getHeader(name: string): number | string | string[] | undefined;
  writeHead(status: number, headers?: OutgoingHttpHeaders): unknown;
  end(data?: string | Uint8Array): unknown;
  destroy(error?: Error): unknown;
}

/**
 * NodeServerResponse is the part of either server's response object the
 * dispatcher and the protocols use: streaming writes, trailers, events.
 */
export interface NodeServerResponse extends NodeResponse {
  readonly statusCode: number;
  readonly destroyed: boolean;
  setHeader(name: string, value: string): unknown;
  write(chunk: Uint8Array | string): boolean;
  addTrailers(headers: OutgoingHttpHeaders): void;
  once(event: "finish" | "close" | "drain", listener: () => void): unknown;
  off(event: "finish" | "close" | "drain", listener: () => void): unknown;
}

/** NodeHandler serves one request on either server. */
export type NodeHandler = (req: NodeRequest, res: NodeResponse) => void;

/**
 * headerValues returns every value a request carries for one header, from the
 * raw header list: Node keeps only the first of some duplicated headers
 * (Authorization among them) in req.headers, and a check that must refuse a
 * duplicate has to see them all.
 */
export function headerValues(req: NodeRequest, name: string): string[] {
  const raw = req.rawHeaders;
  const values: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const key = raw[i]!;
    if (key.length === name.length && key.toLowerCase() === name) values.push(raw[i + 1]!);
  }
  return values;
}

/** singleHeader reads a header that may appear once; a repeated one reads as the list of its values. */
export function singleHeader(req: NodeRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}
