import { Code, ConnectError } from "@connectrpc/connect";
import { codeToHttpStatus, codeToString } from "@connectrpc/connect/protocol-connect";
import { acceptedEncodings } from "./compression.js";
import { connectTimeoutOf } from "./deadline.js";
import { encodeEnvelope, flagEndStream } from "./envelope.js";
import { headerOf, identityBody, isUnknownMethod, type RpcProtocol } from "./rpc-protocol.js";

/**
 * The Connect protocol (connectrpc.com/docs/protocol). A unary call is a
 * plain body (application/json or application/proto) answered with the
 * message, or with an HTTP error status and {code, message}; a streaming call
 * is enveloped (application/connect+…) and ends with an end-of-stream frame
 * that carries the error, after status 200. Compression is named by
 * Content-Encoding for unary, Connect-Content-Encoding for streams, and the
 * answer lists what is accepted in Accept-Encoding or Connect-Accept-Encoding.
 */
export const connectProtocol: RpcProtocol = {
  timeoutOf: (req) => connectTimeoutOf(headerOf(req, "connect-timeout-ms")),

  encodingHeader: (format) => (format.stream ? "connect-content-encoding" : "content-encoding"),

  mismatch(method, format) {
    if (method.methodKind === "unary" && format.stream) {
      return new ConnectError("a unary method takes application/json or application/proto", Code.InvalidArgument);
    }
    if (method.methodKind !== "unary" && !format.stream) {
      // Connect streams only in envelopes; a unary body cannot carry them.
      return new ConnectError(`${method.name} streams; use application/connect+json or application/connect+proto`, Code.InvalidArgument);
    }
    return undefined;
  },

  bodyDecoder: () => identityBody,

  writer(res, format) {
    const accept = format.stream ? "connect-accept-encoding" : "accept-encoding";
    return {
      unary(headers, message) {
        res.writeHead(200, { ...headers, "content-type": format.responseType, [accept]: acceptedEncodings, "content-length": message.byteLength });
        res.end(message);
      },
      open(headers) {
        res.writeHead(200, { ...headers, "content-type": format.responseType, [accept]: acceptedEncodings });
        (res as { flushHeaders?: () => void }).flushHeaders?.();
      },
      message: (message) => res.write(encodeEnvelope(0, message)),
      close(headers, error) {
        if (format.stream) {
          if (!res.headersSent) res.writeHead(200, { ...headers, "content-type": format.responseType, [accept]: acceptedEncodings });
          res.end(endStreamFrame(error));
          return;
        }
        // A unary call that succeeded was answered by unary(): here is its error.
        const failure = error ?? new ConnectError("the call ended without a response", Code.Internal);
        const body = Buffer.from(JSON.stringify({ code: codeToString(failure.code), message: failure.rawMessage }));
        const status = isUnknownMethod(failure) ? 404 : codeToHttpStatus(failure.code);
        res.writeHead(status, { ...headers, "content-type": "application/json", [accept]: acceptedEncodings, "content-length": body.byteLength });
        res.end(body);
      },
    };
  },
};

/** The end-of-stream frame: {} on success, {"error": {code, message}} otherwise. */
function endStreamFrame(error: ConnectError | undefined): Buffer {
  const json = error ? { error: { code: codeToString(error.code), message: error.rawMessage } } : {};
  return encodeEnvelope(flagEndStream, Buffer.from(JSON.stringify(json)));
}
