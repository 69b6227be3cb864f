import { Code, ConnectError } from "@connectrpc/connect";
import { acceptedEncodings } from "./compression.js";
import { grpcTimeoutOf } from "./deadline.js";
import { encodeEnvelope, flagTrailer } from "./envelope.js";
import { encodeGrpcMessage } from "./grpc-message.js";
import { headerOf, identityBody, type BodyDecoder, type RpcProtocol } from "./rpc-protocol.js";

/**
 * gRPC-Web (grpc/doc/PROTOCOL-WEB.md): gRPC's envelopes over HTTP/1.1 or
 * HTTP/2, the status in a last frame flagged 0x80 that holds header lines,
 * always HTTP 200. The text variant (application/grpc-web-text) carries every
 * frame base64-encoded, both ways.
 */
export const grpcWebProtocol: RpcProtocol = {
  timeoutOf: (req) => grpcTimeoutOf(headerOf(req, "grpc-timeout")),
  encodingHeader: () => "grpc-encoding",
  mismatch: () => undefined,
  bodyDecoder: (format) => (format.text ? base64Body() : identityBody),

  writer(res, format) {
    const body = (frames: Buffer) => (format.text ? Buffer.from(frames.toString("base64"), "latin1") : frames);
    const head = (headers: Record<string, string>) => ({ ...headers, "content-type": format.responseType, "grpc-accept-encoding": acceptedEncodings });
    return {
      unary(headers, message) {
        const all = body(Buffer.concat([encodeEnvelope(0, message), trailerFrame(undefined)]));
        res.writeHead(200, { ...head(headers), "content-length": all.byteLength });
        res.end(all);
      },
      open(headers) {
        res.writeHead(200, head(headers));
        (res as { flushHeaders?: () => void }).flushHeaders?.();
      },
      message: (message) => res.write(body(encodeEnvelope(0, message))),
      close(headers, error) {
        if (!res.headersSent) res.writeHead(200, head(headers));
        res.end(body(trailerFrame(error)));
      },
    };
  },
};

/** The trailer frame: HTTP/1-style header lines in a frame flagged 0x80. */
function trailerFrame(error: ConnectError | undefined): Buffer {
  let lines = `grpc-status: ${error?.code ?? 0}\r\n`;
  if (error) lines += `grpc-message: ${encodeGrpcMessage(error.rawMessage)}\r\n`;
  return encodeEnvelope(flagTrailer, Buffer.from(lines, "latin1"));
}

const base64Groups = /^(?:[A-Za-z0-9+/]{4}|[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)*$/;

/**
 * base64Body reads gRPC-Web text: standard base64, possibly several padded
 * chunks in a row (a client may encode each write on its own), decoded in
 * whole 4-character groups as they arrive. Node's decoder skips characters
 * outside the alphabet and stops at the first padding, so the text is
 * checked first, and each padded chunk decoded on its own.
 */
function base64Body(): BodyDecoder {
  const notBase64 = () => new ConnectError("the gRPC-Web text body is not valid base64", Code.InvalidArgument);
  let held = "";
  return {
    // Base64 is a third larger than the frames it carries (plus line breaks a client may add).
    limit: (bytes) => Math.ceil(bytes / 3) * 4 + 64,
    push(chunk) {
      held += chunk.toString("latin1").replace(/[\r\n]/g, "");
      const whole = held.length - (held.length % 4);
      const text = held.slice(0, whole);
      held = held.slice(whole);
      if (!base64Groups.test(text)) throw notBase64();
      const chunks = text.split(/(?<==)(?=[^=])/);
      return chunks.length === 1 ? Buffer.from(text, "base64") : Buffer.concat(chunks.map((part) => Buffer.from(part, "base64")));
    },
    end() {
      if (held !== "") throw notBase64();
    },
  };
}
