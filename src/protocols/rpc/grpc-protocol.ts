import type { NodeServerResponse } from "../../http/node-http.js";
import { acceptedEncodings } from "./compression.js";
import { grpcTimeoutOf } from "./deadline.js";
import { encodeEnvelope } from "./envelope.js";
import { encodeGrpcMessage } from "./grpc-message.js";
import { headerOf, identityBody, type RpcProtocol } from "./rpc-protocol.js";

/**
 * gRPC over HTTP/2 (grpc/doc/PROTOCOL-HTTP2.md): enveloped messages, the
 * status in HTTP/2 trailers (grpc-status, grpc-message), always HTTP 200. An
 * error before any message is a Trailers-Only response.
 */
export const grpcProtocol: RpcProtocol = {
  timeoutOf: (req) => grpcTimeoutOf(headerOf(req, "grpc-timeout")),
  encodingHeader: () => "grpc-encoding",
  mismatch: () => undefined,
  bodyDecoder: () => identityBody,

  writer(res, format) {
    const head = (headers: Record<string, string>) => ({ ...headers, "content-type": format.responseType, "grpc-accept-encoding": acceptedEncodings });
    return {
      unary(headers, message) {
        res.writeHead(200, head(headers));
        res.write(encodeEnvelope(0, message));
        res.addTrailers({ "grpc-status": "0" });
        res.end();
      },
      open(headers) {
        res.writeHead(200, head(headers));
        (res as { flushHeaders?: () => void }).flushHeaders?.();
      },
      message: (message) => res.write(encodeEnvelope(0, message)),
      close(headers, error) {
        const status: Record<string, string> = error
          ? { "grpc-status": String(error.code), "grpc-message": encodeGrpcMessage(error.rawMessage) }
          : { "grpc-status": "0" };
        if (res.headersSent) {
          res.addTrailers(status);
          res.end();
        } else {
          respondTrailersOnly(res, { ...head(headers), ...status });
        }
      },
    };
  },
};

/**
 * respondTrailersOnly answers with a single HEADERS frame that ends the stream
 * (gRPC's Trailers-Only response). Node's compatibility API would send the
 * headers and then an empty DATA frame, which gRPC clients read as a
 * response without status.
 */
function respondTrailersOnly(res: NodeServerResponse, headers: Record<string, string>): void {
  const stream = (res as { stream?: { respond(headers: Record<string, string | number>, options: { endStream: boolean }): void } }).stream;
  if (stream) return stream.respond({ ":status": 200, ...headers }, { endStream: true });
  res.writeHead(200, headers);
  res.end();
}
