import type { Message } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { codeToHttpStatus, codeToString } from "@connectrpc/connect/protocol-connect";
import { headerValues, type NodeRequest, type NodeServerResponse } from "../../http/node-http.js";
import { BodyTooLarge, ClientGone, readBody } from "../../http/read-body.js";
import { requestIdHeader } from "../../http/write-json.js";
import type { Pipeline, PipelineCall } from "../../pipeline/pipeline.js";
import type { Procedure } from "../../pipeline/procedure.js";
import type { RequestContext } from "../../http/request-context.js";
import { timeoutOf } from "./deadline.js";
import { encodeEnvelope, EnvelopeReader, flagCompressed, flagEndStream, flagTrailer, singleEnvelope } from "./envelope.js";
import { encodeGrpcMessage } from "./grpc-message.js";
import { acceptedEncodings, binaryCodec, decompress, jsonCodec, type MessageCodec } from "./message-codec.js";
import type { RpcFormat } from "./rpc-content-type.js";

export interface RpcServerOptions {
  pipeline: Pipeline;
  /** Largest request message, as for REST bodies. */
  maxMessageBytes: number;
  /**
   * Longest a streaming response may wait for a client to read what was
   * already written: a consumer that does not read is disconnected, never
   * buffered without bound.
   */
  streamWriteTimeoutMs: number;
}

/**
 * RpcServer frames calls for Connect, gRPC and gRPC-Web around the one
 * pipeline: it reads and decodes the request, hands it to the pipeline, and
 * writes the response or the error the way each protocol specifies
 * (connectrpc.com/docs/protocol, grpc/doc/PROTOCOL-HTTP2.md and PROTOCOL-WEB.md).
 */
export interface RpcServer {
  serve(req: NodeRequest, res: NodeServerResponse, context: RequestContext, procedure: Procedure, format: RpcFormat): Promise<void>;
}

/** toRpcError turns what the pipeline raised into the error an RPC client gets. */
function toRpcError(error: unknown): ConnectError {
  if (error instanceof ConnectError) return error;
  if (error instanceof BodyTooLarge) return new ConnectError(`message is larger than ${error.limit} bytes`, Code.ResourceExhausted);
  return new ConnectError("internal error", Code.Internal);
}

/** Headers a handler or an error adds (idempotent-replayed, retry-after), minus protocol headers. */
function extraHeaders(context: RequestContext, error?: ConnectError): Record<string, string> {
  const headers: Record<string, string> = { ...context.responseHeaders, [requestIdHeader]: context.requestId };
  error?.metadata.forEach((value, key) => {
    if (!key.startsWith("grpc-") && !key.startsWith("connect-") && key !== "content-type") headers[key] = value;
  });
  return headers;
}

export function createRpcServer(options: RpcServerOptions): RpcServer {
  const { pipeline, maxMessageBytes } = options;

  const callOf = (req: NodeRequest): PipelineCall => ({ authorization: headerValues(req, "authorization"), keyFirst: false });

  /** The deadline the client set, raced against the call. */
  async function withDeadline<T>(context: RequestContext, work: Promise<T>): Promise<T> {
    const delay = timerDelayUntil(context.deadline);
    if (delay === undefined) return work;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ConnectError("the deadline passed before the call finished", Code.DeadlineExceeded)), delay);
    });
    try {
      return await Promise.race([work, expired]);
    } finally {
      clearTimeout(timer);
    }
  }

  function setDeadline(req: NodeRequest, context: RequestContext): void {
    const header = (name: string) => {
      const value = req.headers[name];
      return typeof value === "string" ? value : undefined;
    };
    const timeout = timeoutOf(header("grpc-timeout"), header("connect-timeout-ms"));
    if (timeout !== undefined) context.deadline = Date.now() + timeout;
  }

  /** Reads the unary request's one message: the whole body, framed for gRPC and gRPC-Web. */
  async function readUnary(req: NodeRequest, procedure: Procedure, format: RpcFormat, codec: MessageCodec): Promise<Message> {
    if (!format.stream) {
      let body = await readBody(req, maxMessageBytes);
      const encoding = req.headers["content-encoding"];
      if (typeof encoding === "string" && encoding !== "identity") body = decompress(encoding, body, maxMessageBytes);
      return codec.decode(procedure.method.input, body);
    }
    // Text mode carries base64 of the same frames: a third larger on the wire.
    const limit = maxMessageBytes + 5;
    let body = await readBody(req, format.text ? Math.ceil(limit / 3) * 4 + 64 : limit);
    if (format.text) body = decodeBase64(body);
    const envelope = singleEnvelope(body, maxMessageBytes);
    return codec.decode(procedure.method.input, messageData(req, format, envelope.flags, envelope.data));
  }

  /** messageData undoes a frame's compression, as the request's encoding header says. */
  function messageData(req: NodeRequest, format: RpcFormat, flags: number, data: Buffer): Buffer {
    const header = req.headers[format.protocol === "connect" ? "connect-content-encoding" : "grpc-encoding"];
    const encoding = typeof header === "string" && header !== "identity" ? header : undefined;
    if (!(flags & flagCompressed)) return data;
    if (encoding === undefined) {
      throw new ConnectError(
        `the message is flagged compressed, but the request names no ${format.protocol === "connect" ? "connect-content-encoding" : "grpc-encoding"}`,
        Code.InvalidArgument,
      );
    }
    return decompress(encoding, data, maxMessageBytes);
  }

  async function unary(req: NodeRequest, res: NodeServerResponse, context: RequestContext, procedure: Procedure, format: RpcFormat) {
    const codec = format.binary ? binaryCodec : jsonCodec;
    let output: Message;
    try {
      setDeadline(req, context);
      output = await withDeadline(context, pipeline.unary(context, procedure, callOf(req), () => readUnary(req, procedure, format, codec)));
    } catch (error) {
      if (error instanceof ClientGone) {
        context.clientGone = true;
        return;
      }
      return writeError(res, context, format, toRpcError(error));
    }
    const bytes = codec.encode(procedure.method.output, output);
    context.code = "OK";
    switch (format.protocol) {
      case "connect":
        res.writeHead(200, { ...extraHeaders(context), "content-type": format.responseType, "content-length": bytes.byteLength });
        res.end(bytes);
        return;
      case "grpc":
        res.writeHead(200, { ...extraHeaders(context), "content-type": format.responseType, "grpc-accept-encoding": acceptedEncodings });
        res.write(encodeEnvelope(0, bytes));
        res.addTrailers({ "grpc-status": "0" });
        res.end();
        return;
      case "grpc-web": {
        const body = webBody(format, Buffer.concat([encodeEnvelope(0, bytes), trailerFrame(0, undefined)]));
        res.writeHead(200, { ...extraHeaders(context), "content-type": format.responseType, "content-length": body.byteLength });
        res.end(body);
      }
    }
  }

  /** Answers a failed call; a response whose headers are out already gets the error in its trailers. */
  function writeError(res: NodeServerResponse, context: RequestContext, format: RpcFormat, error: ConnectError): void {
    context.code = Code[error.code];
    const headers = extraHeaders(context, error);
    if (format.protocol === "connect" && !format.stream) {
      const body = Buffer.from(JSON.stringify({ code: codeToString(error.code), message: error.rawMessage }));
      res.writeHead(codeToHttpStatus(error.code), { ...headers, "content-type": "application/json", "content-length": body.byteLength });
      res.end(body);
      return;
    }
    if (format.protocol === "grpc") {
      const status = { "grpc-status": String(error.code), "grpc-message": encodeGrpcMessage(error.rawMessage) };
      if (res.headersSent) {
        res.addTrailers(status);
        res.end();
      } else {
        respondTrailersOnly(res, { ...headers, "content-type": format.responseType, ...status });
      }
      return;
    }
    const frame = format.protocol === "connect" ? endStreamFrame(error) : trailerFrame(error.code, error.rawMessage);
    const body = webBody(format, frame);
    if (!res.headersSent) res.writeHead(200, { ...headers, "content-type": format.responseType });
    res.end(body);
  }

  /** Streaming calls (server, client and bidi): frames are read and written as they come. */
  async function stream(req: NodeRequest, res: NodeServerResponse, context: RequestContext, procedure: Procedure, format: RpcFormat) {
    const codec = format.binary ? binaryCodec : jsonCodec;
    const aborter = new AbortController();
    const abort = () => aborter.abort();
    res.once("close", abort);
    let deadlineTimer: NodeJS.Timeout | undefined;
    try {
      setDeadline(req, context);
      const delay = timerDelayUntil(context.deadline);
      if (delay !== undefined) deadlineTimer = setTimeout(abort, delay);
      const inputs = readFrames(req, format, procedure, codec);
      const outputs = await pipeline.stream(context, procedure, callOf(req), inputs, aborter.signal);
      res.writeHead(200, { ...extraHeaders(context), "content-type": format.responseType, "grpc-accept-encoding": acceptedEncodings });
      // Headers go out at once: a client waits for them before the first message.
      (res as { flushHeaders?: () => void }).flushHeaders?.();
      for await (const output of outputs) {
        if (aborter.signal.aborted) break;
        const frame = encodeEnvelope(0, codec.encode(procedure.method.output, output));
        if (!res.write(webBody(format, frame))) await drained(res, options.streamWriteTimeoutMs);
      }
      if (res.destroyed) {
        context.clientGone = true;
        return;
      }
      if (aborter.signal.aborted && context.deadline !== undefined && Date.now() >= context.deadline) {
        throw new ConnectError("the deadline passed", Code.DeadlineExceeded);
      }
      context.code = "OK";
      if (format.protocol === "grpc") {
        res.addTrailers({ "grpc-status": "0" });
        res.end();
      } else {
        res.end(webBody(format, format.protocol === "connect" ? endStreamFrame(undefined) : trailerFrame(0, undefined)));
      }
    } catch (error) {
      if (error instanceof ClientGone || res.destroyed) {
        context.clientGone = true;
        return;
      }
      writeError(res, context, format, toRpcError(pipeline.failure(context, error)));
    } finally {
      clearTimeout(deadlineTimer);
      res.off("close", abort);
    }
  }

  /** Decodes request frames as they arrive; the body's end ends the inputs. */
  async function* readFrames(req: NodeRequest, format: RpcFormat, procedure: Procedure, codec: MessageCodec): AsyncGenerator<Message> {
    const reader = new EnvelopeReader(maxMessageBytes);
    let text = "";
    for await (const chunk of req as AsyncIterable<Buffer>) {
      let bytes = chunk;
      if (format.text) {
        // Decode whole 4-character groups; keep the rest for the next chunk.
        text += chunk.toString("latin1");
        const whole = text.length - (text.length % 4);
        bytes = decodeBase64(Buffer.from(text.slice(0, whole), "latin1"));
        text = text.slice(whole);
      }
      for (const envelope of reader.push(bytes)) {
        if (envelope.flags & flagEndStream) return;
        yield codec.decode(procedure.method.input, messageData(req, format, envelope.flags, envelope.data));
      }
    }
    if (reader.pending > 0 || text !== "") throw new ConnectError("the request ends inside a message frame", Code.InvalidArgument);
  }

  return {
    serve(req, res, context, procedure, format) {
      if (procedure.unary) {
        if (format.stream && format.protocol === "connect") return Promise.resolve(writeError(res, context, format, new ConnectError("a unary method takes application/json or application/proto", Code.InvalidArgument)));
        return unary(req, res, context, procedure, format);
      }
      if (!format.stream) {
        // Connect streams only in envelopes (connect+json, connect+proto); a unary body cannot carry them.
        return Promise.resolve(writeError(res, context, format, new ConnectError(`${procedure.method.name} streams; use application/connect+json or application/connect+proto`, Code.InvalidArgument)));
      }
      return stream(req, res, context, procedure, format);
    },
  };
}

/** The longest delay setTimeout honours (2^31-1 ms, about 24.8 days); a longer one fires after 1 ms. */
const maxTimerDelayMs = 2 ** 31 - 1;

/**
 * timerDelayUntil is how long to wait for a deadline (epoch ms): undefined
 * when there is none, or when it lies beyond what a timer can wait. gRPC
 * allows timeouts of up to 99999999 hours and Connect up to 10 digits of
 * milliseconds; Node would clamp such a delay to 1 ms and fail the call at
 * once, while no request lives that long.
 */
function timerDelayUntil(deadline: number | undefined): number | undefined {
  if (deadline === undefined) return undefined;
  const delay = Math.max(0, deadline - Date.now());
  return delay > maxTimerDelayMs ? undefined : delay;
}

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

/** The gRPC-Web trailer frame: HTTP/1-style header lines in a frame flagged 0x80. */
function trailerFrame(code: Code | 0, message: string | undefined): Buffer {
  let lines = `grpc-status: ${code}\r\n`;
  if (message !== undefined) lines += `grpc-message: ${encodeGrpcMessage(message)}\r\n`;
  return encodeEnvelope(flagTrailer, Buffer.from(lines, "latin1"));
}

/** The Connect end-of-stream frame: {} on success, {"error": {code, message}} otherwise. */
function endStreamFrame(error: ConnectError | undefined): Buffer {
  const json = error ? { error: { code: codeToString(error.code), message: error.rawMessage } } : {};
  return encodeEnvelope(flagEndStream, Buffer.from(JSON.stringify(json)));
}

/** gRPC-Web text mode sends every frame base64-encoded. */
function webBody(format: RpcFormat, frame: Buffer): Buffer {
  return format.text ? Buffer.from(frame.toString("base64"), "latin1") : frame;
}

/**
 * decodeBase64 reads gRPC-Web text: standard base64, possibly several padded
 * chunks in a row (a client may encode each write on its own). Node's decoder
 * skips characters outside the alphabet and stops at the first padding, so a
 * request is checked first, and each padded chunk decoded on its own.
 */
function decodeBase64(text: Buffer): Buffer {
  const source = text.toString("latin1").replace(/\r?\n/g, "");
  if (!/^(?:[A-Za-z0-9+/]{4}|[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)*$/.test(source)) {
    throw new ConnectError("the gRPC-Web text body is not valid base64", Code.InvalidArgument);
  }
  const chunks = source.split(/(?<==)(?=[^=])/);
  return chunks.length === 1 ? Buffer.from(source, "base64") : Buffer.concat(chunks.map((chunk) => Buffer.from(chunk, "base64")));
}

/** drained waits until the client has read what was written, or destroys a connection that stopped reading. */
function drained(res: NodeServerResponse, timeoutMs: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      res.destroy();
      reject(new ClientGone());
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      res.off("close", gone);
      resolve();
    };
    const gone = () => {
      clearTimeout(timer);
      res.off("drain", done);
      reject(new ClientGone());
    };
    res.once("drain", done);
    res.once("close", gone);
  });
}
