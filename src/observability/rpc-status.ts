import { Code } from "@connectrpc/connect";
import { codeFromString } from "@connectrpc/connect/protocol-connect";
import type { NodeResponse } from "../server/node-http.js";

/** The RPC protocols whose status this reads. */
export type RpcProtocol = "connect" | "grpc" | "grpc-web";

/** The response methods connect-node writes through, as this module wraps them. */
interface WrittenResponse {
  writeHead(status: number, ...rest: unknown[]): unknown;
  addTrailers(headers: Record<string, unknown>): void;
  write(chunk: unknown, ...rest: unknown[]): boolean;
  end(...args: unknown[]): unknown;
}

/** Connect error bodies are small JSON objects; more than this is not one worth parsing. */
const maxErrorBodyBytes = 8 * 1024;
/** gRPC-Web marks the trailer frame with the high bit of its flags byte; bit 0 means compressed. */
const trailerFlag = 0x80;
const compressedFlag = 0x01;

/**
 * watchRpcStatus learns the status an RPC response carries, from what is
 * written to the client: gRPC's grpc-status trailer (or header, in a
 * trailers-only response), gRPC-Web's trailer frame, Connect's HTTP status
 * and error body "code". It reads the wire rather than an interceptor because
 * connect-node decodes the request (size limit, malformed body) before any
 * interceptor runs, and those refusals must be counted too.
 *
 * Returns a function that gives the status name once the response is done:
 * "OK", a Code name such as "InvalidArgument", or undefined when the response
 * carries none (a 415 before any RPC started, a compressed error body).
 */
export function watchRpcStatus(res: NodeResponse, protocol: RpcProtocol): () => string | undefined {
  const target = res as unknown as WrittenResponse;
  const { writeHead, addTrailers, write, end } = target;
  let httpStatus = 200;
  let headerStatus: string | undefined;
  let trailerStatus: string | undefined;
  let encoded = false;
  let lastChunk: Buffer | undefined;
  const errorBody: Buffer[] = [];
  let errorBytes = 0;

  const seen = (chunk: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === "function") return;
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array);
    if (protocol === "grpc-web") lastChunk = bytes;
    if (protocol === "connect" && httpStatus !== 200 && errorBytes + bytes.length <= maxErrorBodyBytes) {
      errorBody.push(bytes);
      errorBytes += bytes.length;
    }
  };

  target.writeHead = function (this: unknown, status: number, ...rest: unknown[]) {
    httpStatus = status;
    const headers = rest.find((arg) => typeof arg === "object" && arg !== null) as Record<string, unknown> | undefined;
    headerStatus = headerValue(headers, "grpc-status") ?? headerStatus;
    encoded = headerValue(headers, "content-encoding") !== undefined;
    return writeHead.call(this, status, ...rest);
  };
  target.addTrailers = function (this: unknown, headers: Record<string, unknown>) {
    trailerStatus = headerValue(headers, "grpc-status") ?? trailerStatus;
    addTrailers.call(this, headers);
  };
  target.write = function (this: unknown, chunk: unknown, ...rest: unknown[]) {
    seen(chunk);
    return write.call(this, chunk, ...rest);
  };
  target.end = function (this: unknown, ...args: unknown[]) {
    seen(args[0]);
    return end.apply(this, args);
  };

  return () => {
    switch (protocol) {
      case "grpc":
        return grpcStatusName(trailerStatus ?? headerStatus);
      case "grpc-web":
        return grpcStatusName(headerStatus ?? (lastChunk ? grpcWebTrailerStatus(lastChunk) : undefined));
      case "connect":
        if (httpStatus === 200) return "OK";
        return encoded ? undefined : connectErrorCode(Buffer.concat(errorBody));
    }
  };
}

function headerValue(headers: Record<string, unknown> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? String(value[0]) : String(value);
  }
  return undefined;
}

/** The trailer frame is flags (1 byte), length (4 bytes), then HTTP/1-style header lines. */
function grpcWebTrailerStatus(frame: Buffer): string | undefined {
  if (frame.length < 5 || !(frame[0]! & trailerFlag) || frame[0]! & compressedFlag) return undefined;
  return /^grpc-status:\s*(\d+)\s*$/im.exec(frame.subarray(5).toString("utf8"))?.[1];
}

function grpcStatusName(status: string | undefined): string | undefined {
  if (status === undefined || !/^\d+$/.test(status)) return undefined;
  const code = Number(status);
  return code === 0 ? "OK" : (Code[code] ?? status);
}

function connectErrorCode(body: Buffer): string | undefined {
  try {
    const parsed = JSON.parse(body.toString("utf8")) as { code?: unknown };
    const code = typeof parsed.code === "string" ? codeFromString(parsed.code) : undefined;
    return code === undefined ? undefined : Code[code];
  } catch {
    return undefined;
  }
}
