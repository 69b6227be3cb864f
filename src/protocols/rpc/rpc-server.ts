import type { Message } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { headerValues, type NodeRequest, type NodeServerResponse } from "../../http/node-http.js";
import { BodyTooLarge, ClientGone, readBody } from "../../http/read-body.js";
import type { RequestContext } from "../../http/request-context.js";
import { requestIdHeader } from "../../http/write-json.js";
import type { Pipeline, PipelineCall } from "../../pipeline/pipeline.js";
import type { Procedure } from "../../pipeline/procedure.js";
import { isProtocolViolation, protocolViolation } from "../../pipeline/protocol-violation.js";
import { gunzip, requestEncodingOf } from "./compression.js";
import { connectProtocol } from "./connect-protocol.js";
import { onDeadline } from "./deadline.js";
import { drained } from "./drained.js";
import { cardinalityError, EnvelopeReader, flagCompressed, flagEndStream, singleEnvelope } from "./envelope.js";
import { grpcProtocol } from "./grpc-protocol.js";
import { grpcWebProtocol } from "./grpc-web-protocol.js";
import { binaryCodec, jsonCodec, type MessageCodec } from "./message-codec.js";
import type { RpcFormat } from "./rpc-content-type.js";
import { unknownMethodError, type BodyDecoder, type ResponseHeaders, type RpcProtocol } from "./rpc-protocol.js";
import { untilAborted } from "./until-aborted.js";

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
 * RpcServer runs calls for Connect, gRPC and gRPC-Web around the one
 * pipeline: it applies the client's deadline, reads and decodes the request,
 * hands it to the pipeline, and has the call's protocol (connect-protocol.ts,
 * grpc-protocol.ts, grpc-web-protocol.ts) write the response or the error.
 */
export interface RpcServer {
  serve(req: NodeRequest, res: NodeServerResponse, context: RequestContext, procedure: Procedure, format: RpcFormat): Promise<void>;
  /** Answers a call to a method this service does not have: Unimplemented, in the protocol's own form. */
  unimplemented(res: NodeServerResponse, context: RequestContext, path: string, format: RpcFormat): void;
}

const protocols: Record<RpcFormat["protocol"], RpcProtocol> = {
  connect: connectProtocol,
  grpc: grpcProtocol,
  "grpc-web": grpcWebProtocol,
};

/** What a call's request says about how to read it, checked before any byte of the body. */
interface CallShape {
  protocol: RpcProtocol;
  format: RpcFormat;
  codec: MessageCodec;
  /** The request's compression: gzip, or undefined for none. */
  encoding: "gzip" | undefined;
  /** The name of the header that carried it, for messages. */
  encodingHeader: string;
}

const deadlineExceeded = () => new ConnectError("the deadline passed before the call finished", Code.DeadlineExceeded);

/** Headers a handler or an error adds (idempotent-replayed, retry-after), minus protocol headers. */
function extraHeaders(context: RequestContext, error?: ConnectError): ResponseHeaders {
  const headers: ResponseHeaders = { ...context.responseHeaders, [requestIdHeader]: context.requestId };
  error?.metadata.forEach((value, key) => {
    if (!key.startsWith("grpc-") && !key.startsWith("connect-") && key !== "content-type") headers[key] = value;
  });
  return headers;
}

export function createRpcServer(options: RpcServerOptions): RpcServer {
  const { pipeline, maxMessageBytes } = options;

  const callOf = (req: NodeRequest): PipelineCall => ({ authorization: headerValues(req, "authorization"), keyFirst: false });

  /**
   * toRpcError is what a client may see of a failure. The pipeline has mapped
   * what its procedures raised; what is left (the body's size, a failure in
   * this file) is mapped here, through the pipeline's one mapping for anything
   * unexpected.
   */
  function toRpcError(context: RequestContext, error: unknown): ConnectError {
    if (error instanceof ConnectError) return error;
    if (error instanceof BodyTooLarge) return new ConnectError(`message is larger than ${error.limit} bytes`, Code.ResourceExhausted);
    const mapped = pipeline.failure(context, error);
    return mapped instanceof ConnectError ? mapped : new ConnectError("internal error", Code.Internal);
  }

  function fail(res: NodeServerResponse, context: RequestContext, shape: { protocol: RpcProtocol; format: RpcFormat }, error: ConnectError): void {
    context.code = Code[error.code];
    if (isProtocolViolation(error)) context.clientFault = true;
    shape.protocol.writer(res, shape.format).close(extraHeaders(context, error), error);
  }

  /** messageData undoes a frame's compression, as the request's encoding header says. */
  function messageData(shape: CallShape, flags: number, data: Buffer): Buffer {
    if (!(flags & flagCompressed)) return data;
    if (shape.encoding === undefined) {
      // gRPC: a compressed flag without an encoding is a protocol error, INTERNAL (doc/compression.md).
      throw protocolViolation(`the message is flagged compressed, but the request names no ${shape.encodingHeader}`);
    }
    return gunzip(data, maxMessageBytes);
  }

  /** Reads the unary request's one message: the whole body, enveloped for every protocol but Connect's unary. */
  async function readUnary(req: NodeRequest, procedure: Procedure, shape: CallShape): Promise<Message> {
    const { format, codec } = shape;
    if (!format.stream) {
      let body = await readBody(req, maxMessageBytes);
      if (shape.encoding !== undefined) body = gunzip(body, maxMessageBytes);
      return codec.decode(procedure.method.input, body);
    }
    const decoder = shape.protocol.bodyDecoder(format);
    const body = decoder.push(await readBody(req, decoder.limit(maxMessageBytes + 5)));
    decoder.end();
    const envelope = singleEnvelope(body, maxMessageBytes);
    return codec.decode(procedure.method.input, messageData(shape, envelope.flags, envelope.data));
  }

  /** Decodes request frames as they arrive; the body's end (or Connect's end-of-stream frame) ends the inputs. */
  async function* readFrames(req: NodeRequest, procedure: Procedure, shape: CallShape): AsyncGenerator<Message> {
    const reader = new EnvelopeReader(maxMessageBytes);
    const decoder: BodyDecoder = shape.protocol.bodyDecoder(shape.format);
    for await (const chunk of req as AsyncIterable<Buffer>) {
      for (const envelope of reader.push(decoder.push(chunk))) {
        if (envelope.flags & flagEndStream && shape.format.protocol === "connect") return;
        yield shape.codec.decode(procedure.method.input, messageData(shape, envelope.flags, envelope.data));
      }
    }
    decoder.end();
    if (reader.pending > 0) throw new ConnectError("the request ends inside a message frame", Code.InvalidArgument);
  }

  /**
   * exactlyOne holds a server stream's one request message until the client
   * has half-closed: none or a second one is Unimplemented, as for unary.
   */
  async function* exactlyOne(inputs: AsyncIterable<Message>): AsyncGenerator<Message> {
    let first: Message | undefined;
    let count = 0;
    for await (const input of inputs) {
      if (++count > 1) throw cardinalityError(count);
      first = input;
    }
    if (first === undefined) throw cardinalityError(0);
    yield first;
  }

  async function unary(req: NodeRequest, res: NodeServerResponse, context: RequestContext, procedure: Procedure, shape: CallShape) {
    const deadline = new AbortController();
    const cancelDeadline = onDeadline(context.deadline, () => deadline.abort(deadlineExceeded()));
    try {
      const output = await untilAborted(
        pipeline.unary(context, procedure, callOf(req), () => readUnary(req, procedure, shape)),
        deadline.signal,
      );
      context.code = "OK";
      shape.protocol.writer(res, shape.format).unary(extraHeaders(context), shape.codec.encode(procedure.method.output, output));
    } catch (error) {
      if (error instanceof ClientGone) {
        context.clientGone = true;
        return;
      }
      fail(res, context, shape, toRpcError(context, error));
    } finally {
      cancelDeadline();
    }
  }

  /**
   * Streaming calls (server, client and bidi): frames are read and written as
   * they come. The deadline and the client leaving abort one signal; every
   * wait (the procedure's next message, a slow reader) stops at it, so a
   * request side the client keeps open cannot outlive the deadline, and a
   * stream that stopped because its deadline passed ends DeadlineExceeded,
   * never OK.
   */
  async function stream(req: NodeRequest, res: NodeServerResponse, context: RequestContext, procedure: Procedure, shape: CallShape) {
    const aborter = new AbortController();
    const gone = () => aborter.abort(new ClientGone());
    res.once("close", gone);
    const cancelDeadline = onDeadline(context.deadline, () => aborter.abort(deadlineExceeded()));
    let outputs: AsyncIterator<Message> | undefined;
    try {
      const frames = readFrames(req, procedure, shape);
      const inputs = procedure.method.methodKind === "server_streaming" ? exactlyOne(frames) : frames;
      outputs = (await untilAborted(pipeline.stream(context, procedure, callOf(req), inputs, aborter.signal), aborter.signal))[Symbol.asyncIterator]();
      const writer = shape.protocol.writer(res, shape.format);
      writer.open(extraHeaders(context));
      for (;;) {
        const next = await untilAborted(outputs.next(), aborter.signal);
        if (next.done) break;
        if (!writer.message(shape.codec.encode(procedure.method.output, next.value))) {
          await untilAborted(drained(res, options.streamWriteTimeoutMs), aborter.signal);
        }
      }
      // A procedure ends its stream when the signal aborts: the reason is the outcome.
      if (aborter.signal.aborted) throw aborter.signal.reason;
      context.code = "OK";
      writer.close(extraHeaders(context));
    } catch (error) {
      if (error instanceof ClientGone || res.destroyed) {
        context.clientGone = true;
        return;
      }
      fail(res, context, shape, toRpcError(context, error));
    } finally {
      cancelDeadline();
      res.off("close", gone);
      if (!aborter.signal.aborted) aborter.abort(new ClientGone());
      // A procedure still waiting on a request side left open is told to stop; nobody awaits it.
      outputs?.return?.().catch(() => {});
    }
  }

  return {
    serve(req, res, context, procedure, format) {
      const protocol = protocols[format.protocol];
      let shape: CallShape;
      try {
        const timeout = protocol.timeoutOf(req);
        if (timeout !== undefined) context.deadline = Date.now() + timeout;
        const mismatch = protocol.mismatch(procedure.method, format);
        if (mismatch) throw mismatch;
        const encodingHeader = protocol.encodingHeader(format);
        const encoding = requestEncodingOf(req.headers[encodingHeader]);
        shape = { protocol, format, codec: format.binary ? binaryCodec : jsonCodec, encoding, encodingHeader };
      } catch (error) {
        fail(res, context, { protocol, format }, toRpcError(context, error));
        return Promise.resolve();
      }
      return procedure.unary ? unary(req, res, context, procedure, shape) : stream(req, res, context, procedure, shape);
    },

    unimplemented(res, context, path, format) {
      fail(res, context, { protocol: protocols[format.protocol], format }, unknownMethodError(path));
    },
  };
}
