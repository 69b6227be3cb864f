import { Code, ConnectError } from "@connectrpc/connect";

/** Envelope flags (gRPC, gRPC-Web and Connect streaming share the 5-byte frame). */
export const flagCompressed = 0b0000_0001;
/** Connect streaming: the end-of-stream message. */
export const flagEndStream = 0b0000_0010;
/** gRPC-Web: the trailer frame. */
export const flagTrailer = 0b1000_0000;

/** Envelope is one length-prefixed frame: a flags byte, a 4-byte big-endian length, the data. */
export interface Envelope {
  flags: number;
  data: Buffer;
}

/** encodeEnvelope frames data. */
export function encodeEnvelope(flags: number, data: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(5 + data.byteLength);
  frame[0] = flags;
  frame.writeUInt32BE(data.byteLength, 1);
  frame.set(data, 5);
  return frame;
}

/**
 * EnvelopeReader splits a byte stream into envelopes as chunks arrive. A
 * frame that announces more than maxBytes is refused before its data is
 * buffered, so a client cannot make the server hold more than one limit.
 */
export class EnvelopeReader {
  private buffered: Buffer[] = [];
  private size = 0;

  constructor(private readonly maxBytes: number) {}

  /** Bytes held that do not yet form a whole envelope. */
  get pending(): number {
    return this.size;
  }

  push(chunk: Buffer): Envelope[] {
    this.buffered.push(chunk);
    this.size += chunk.length;
    const out: Envelope[] = [];
    for (;;) {
      if (this.size < 5) break;
      const head = this.peek(5);
      const length = head.readUInt32BE(1);
      if (length > this.maxBytes) {
        throw new ConnectError(`message is larger than ${this.maxBytes} bytes`, Code.ResourceExhausted);
      }
      if (this.size < 5 + length) break;
      const all = this.take(5 + length);
      out.push({ flags: all[0]!, data: all.subarray(5) });
    }
    return out;
  }

  private peek(count: number): Buffer {
    if (this.buffered[0]!.length < count) this.buffered = [Buffer.concat(this.buffered, this.size)];
    return this.buffered[0]!.subarray(0, count);
  }

  private take(count: number): Buffer {
    const joined = this.buffered.length === 1 ? this.buffered[0]! : Buffer.concat(this.buffered, this.size);
    const taken = joined.subarray(0, count);
    const rest = joined.subarray(count);
    this.buffered = rest.length > 0 ? [rest] : [];
    this.size = rest.length;
    return taken;
  }
}

/**
 * singleEnvelope reads the one message of a unary request body. A truncated
 * frame is InvalidArgument; no message or a second one is Unimplemented, as
 * gRPC names a call whose message count the method does not take (and as the
 * Connect conformance suite expects).
 */
export function singleEnvelope(body: Buffer, maxBytes: number): Envelope {
  const reader = new EnvelopeReader(maxBytes);
  const envelopes = reader.push(body);
  if (reader.pending > 0) throw new ConnectError("the request ends inside a message frame", Code.InvalidArgument);
  if (envelopes.length !== 1) throw cardinalityError(envelopes.length);
  return envelopes[0]!;
}

/** cardinalityError refuses a request that carries count messages where the method takes exactly one. */
export function cardinalityError(count: number): ConnectError {
  return new ConnectError(count === 0 ? "the request carries no message" : "the method takes exactly one request message", Code.Unimplemented);
}
