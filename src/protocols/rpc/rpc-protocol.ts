import type { DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { NodeRequest, NodeServerResponse } from "../../http/node-http.js";
import type { RpcFormat } from "./rpc-content-type.js";

/** Headers a response carries besides the protocol's own: the request id, idempotent-replayed, retry-after. */
export type ResponseHeaders = Record<string, string>;

/**
 * RpcWriter writes one call's response in one protocol's framing. The
 * server decides what to say; the writer only knows how its protocol says
 * it (connectrpc.com/docs/protocol, grpc/doc/PROTOCOL-HTTP2.md, PROTOCOL-WEB.md).
 */
export interface RpcWriter {
  /** Answers a unary call that succeeded: headers, its one message and the OK status. */
  unary(headers: ResponseHeaders, message: Uint8Array): void;
  /** Starts a streamed response: status 200 and headers, sent at once (a client waits for them before the first message). */
  open(headers: ResponseHeaders): void;
  /** Writes one streamed message; false when the client has yet to read what was written before. */
  message(message: Uint8Array): boolean;
  /** Ends the call with OK, or with error; an error before open() is the whole response. */
  close(headers: ResponseHeaders, error?: ConnectError): void;
}

/**
 * BodyDecoder turns a request body's bytes into envelope bytes as they
 * arrive: as they are, or (gRPC-Web text) from base64.
 */
export interface BodyDecoder {
  /** The most body bytes that can carry frameBytes of envelopes. */
  limit(frameBytes: number): number;
  /** Decodes the next chunk; what cannot be decoded yet is kept for the next one. */
  push(chunk: Buffer): Buffer;
  /** The body has ended: throws InvalidArgument when bytes are held that never formed a whole unit. */
  end(): void;
}

/** The identity BodyDecoder: the body is the envelopes. */
export const identityBody: BodyDecoder = { limit: (bytes) => bytes, push: (chunk) => chunk, end: () => {} };

/**
 * RpcProtocol is everything that differs between Connect, gRPC and
 * gRPC-Web, one file each: the headers a call is read from and the writer
 * that frames its response. The call itself (deadline, reading, the
 * pipeline, streaming) is the server's and the same for all three.
 */
export interface RpcProtocol {
  /** The client's timeout in ms from this protocol's header; undefined for none, InvalidArgument when malformed. */
  timeoutOf(req: NodeRequest): number | undefined;
  /** The request header that names the messages' compression. */
  encodingHeader(format: RpcFormat): string;
  /** Refuses a format the method cannot be called with (a ConnectError), or returns undefined. */
  mismatch(method: DescMethod, format: RpcFormat): ConnectError | undefined;
  /** A fresh decoder for one request body. */
  bodyDecoder(format: RpcFormat): BodyDecoder;
  writer(res: NodeServerResponse, format: RpcFormat): RpcWriter;
}

/** headerOf reads a single-valued request header. */
export function headerOf(req: NodeRequest, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === "string" ? value : undefined;
}

/** The cause that marks an Unimplemented error as "no such method" rather than "not supported". */
const noSuchMethod = new Error("no such method");

/**
 * unknownMethodError answers a call to a path no procedure serves:
 * Unimplemented everywhere, and over Connect with HTTP 404 rather than
 * Unimplemented's 501, as an HTTP server answers a path it does not have
 * (Connect clients read 404 as Unimplemented too).
 */
export function unknownMethodError(path: string): ConnectError {
  return new ConnectError(`${path} is not a method of this service`, Code.Unimplemented, undefined, undefined, noSuchMethod);
}

/** isUnknownMethod tells unknownMethodError() apart from other Unimplemented errors. */
export function isUnknownMethod(error: ConnectError): boolean {
  return error.cause === noSuchMethod;
}
