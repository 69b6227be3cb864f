import type { Protocol } from "../../http/request-context.js";

/** RpcFormat is what one RPC request's Content-Type says about its protocol and framing. */
export interface RpcFormat {
  protocol: Exclude<Protocol, "rest" | "http">;
  /** Binary protobuf or proto3 JSON. */
  binary: boolean;
  /** Connect only: enveloped streaming messages (application/connect+…) rather than a unary body. */
  stream: boolean;
  /** gRPC-Web only: the body is base64 text (application/grpc-web-text). */
  text: boolean;
  /** The Content-Type the response carries. */
  responseType: string;
}

const formats = new Map<string, RpcFormat>();
const add = (types: string[], format: Omit<RpcFormat, "responseType">, responseType: string) => {
  for (const type of types) formats.set(type, { ...format, responseType });
};
add(["application/grpc", "application/grpc+proto"], { protocol: "grpc", binary: true, stream: true, text: false }, "application/grpc+proto");
add(["application/grpc+json"], { protocol: "grpc", binary: false, stream: true, text: false }, "application/grpc+json");
add(["application/grpc-web", "application/grpc-web+proto"], { protocol: "grpc-web", binary: true, stream: true, text: false }, "application/grpc-web+proto");
add(["application/grpc-web+json"], { protocol: "grpc-web", binary: false, stream: true, text: false }, "application/grpc-web+json");
add(["application/grpc-web-text", "application/grpc-web-text+proto"], { protocol: "grpc-web", binary: true, stream: true, text: true }, "application/grpc-web-text+proto");
add(["application/proto"], { protocol: "connect", binary: true, stream: false, text: false }, "application/proto");
add(["application/json"], { protocol: "connect", binary: false, stream: false, text: false }, "application/json");
add(["application/connect+proto"], { protocol: "connect", binary: true, stream: true, text: false }, "application/connect+proto");
add(["application/connect+json"], { protocol: "connect", binary: false, stream: true, text: false }, "application/connect+json");

/**
 * rpcFormatOf reads a request's Content-Type. The media type is
 * case-insensitive; a charset parameter is accepted only as UTF-8 (on JSON
 * types). undefined: no RPC protocol speaks it (415).
 */
export function rpcFormatOf(contentType: string | undefined): RpcFormat | undefined {
  if (contentType === undefined) return undefined;
  const semicolon = contentType.indexOf(";");
  const type = (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  const format = formats.get(type);
  if (!format || semicolon < 0) return format;
  const params = contentType.slice(semicolon + 1).trim().toLowerCase();
  return params === "" || params === "charset=utf-8" || params === 'charset="utf-8"' ? format : undefined;
}

/** protocolLabelOf names the protocol a request to an RPC path means to speak, for logs, even when it is refused. */
export function protocolLabelOf(contentType: string | undefined): RpcFormat["protocol"] {
  const type = (contentType ?? "").toLowerCase();
  if (type.startsWith("application/grpc-web")) return "grpc-web";
  if (type.startsWith("application/grpc")) return "grpc";
  return "connect";
}
