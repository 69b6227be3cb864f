import net from "node:net";

/**
 * A frame as it came off the wire: the 9-byte header's type, flags and stream,
 * and the payload. HPACK-coded header blocks stay coded (Node may
 * Huffman-code them); tests read a response's shape from the frame types and
 * flags, and its meaning from the server's request log.
 */
export interface RawFrame {
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
}

export const frameType = { data: 0x0, headers: 0x1, rstStream: 0x3, settings: 0x4, ping: 0x6, goaway: 0x7, windowUpdate: 0x8 } as const;
export const flagEndStream = 0x1;
export const flagEndHeaders = 0x4;

const preface = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/** An HPACK integer with an n-bit prefix (RFC 7541 §5.1). */
function hpackInteger(value: number, prefixBits: number, firstByte: number): Buffer {
  const max = (1 << prefixBits) - 1;
  if (value < max) return Buffer.from([firstByte | value]);
  const bytes = [firstByte | max];
  let rest = value - max;
  while (rest >= 128) {
    bytes.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

/**
 * encodeHeaderBlock writes every field as "literal without indexing, new
 * name" with plain (not Huffman) strings (RFC 7541 §6.2.2): the simplest
 * valid block, and one that can repeat a field Node's own client refuses to
 * send twice (authorization).
 */
export function encodeHeaderBlock(fields: readonly (readonly [string, string])[]): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of fields) {
    const n = Buffer.from(name, "latin1");
    const v = Buffer.from(value, "latin1");
    parts.push(Buffer.from([0x00]), hpackInteger(n.length, 7, 0), n, hpackInteger(v.length, 7, 0), v);
  }
  return Buffer.concat(parts);
}

export function encodeFrame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([header, payload]);
}

/** RawHttp2Exchange is what one hand-written request got back on its stream. */
export interface RawHttp2Exchange {
  /** The frames of stream 1, in order, until it ended (or the connection did). */
  frames: RawFrame[];
}

/**
 * rawHttp2Request opens a prior-knowledge HTTP/2 connection, sends one
 * request on stream 1 exactly as given (header fields in order, repeated
 * ones included), and collects that stream's frames until it ends. No
 * HTTP/2 library is involved on the client side, so nothing normalises the
 * request first.
 */
export function rawHttp2Request(port: number, fields: readonly (readonly [string, string])[], body?: Buffer, timeoutMs = 5000): Promise<RawHttp2Exchange> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    const frames: RawFrame[] = [];
    let buffered = Buffer.alloc(0);
    const timer = setTimeout(() => finish(new Error(`stream 1 did not end within ${timeoutMs} ms`)), timeoutMs);
    function finish(error?: Error) {
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve({ frames });
    }
    socket.on("error", (error) => finish(error));
    socket.on("close", () => finish());
    socket.on("connect", () => {
      const block = encodeHeaderBlock(fields);
      socket.write(
        Buffer.concat([
          preface,
          encodeFrame(frameType.settings, 0, 0),
          encodeFrame(frameType.headers, flagEndHeaders | (body ? 0 : flagEndStream), 1, block),
          ...(body ? [encodeFrame(frameType.data, flagEndStream, 1, body)] : []),
        ]),
      );
    });
    socket.on("data", (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 9) {
        const length = buffered.readUIntBE(0, 3);
        if (buffered.length < 9 + length) break;
        const frame: RawFrame = {
          type: buffered[3]!,
          flags: buffered[4]!,
          streamId: buffered.readUInt32BE(5) & 0x7fffffff,
          payload: buffered.subarray(9, 9 + length),
        };
        buffered = buffered.subarray(9 + length);
        if (frame.type === frameType.settings && !(frame.flags & 0x1)) socket.write(encodeFrame(frameType.settings, 0x1, 0));
        if (frame.streamId === 1) frames.push(frame);
        const ended = frame.streamId === 1 && (frame.type === frameType.rstStream || ((frame.type === frameType.headers || frame.type === frameType.data) && frame.flags & flagEndStream));
        if (ended || frame.type === frameType.goaway) return finish();
      }
    });
  });
}

/** RST_STREAM error codes (RFC 9113 §7). */
export const errorCode = { noError: 0x0, cancel: 0x8 } as const;

/**
 * rawHttp2Abandon opens stream 1 with the given header fields and part of a
 * body (neither frame ends the stream), waits, then resets it with
 * RST_STREAM (CANCEL, or NO_ERROR as Node's own client does on destroy()), as
 * a client that gives up mid-upload does. Node's client close() would send
 * END_STREAM before the reset, which completes the body. Returns the frames
 * the server sent on stream 1 before the reset.
 */
export async function rawHttp2Abandon(
  port: number,
  fields: readonly (readonly [string, string])[],
  partialBody: Buffer,
  resetCode: number = errorCode.cancel,
  waitMs = 300,
): Promise<RawFrame[]> {
  const socket = net.connect(port, "127.0.0.1");
  const frames: RawFrame[] = [];
  let buffered = Buffer.alloc(0);
  socket.on("error", () => {});
  socket.on("data", (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 9) {
      const length = buffered.readUIntBE(0, 3);
      if (buffered.length < 9 + length) break;
      const frame: RawFrame = { type: buffered[3]!, flags: buffered[4]!, streamId: buffered.readUInt32BE(5) & 0x7fffffff, payload: buffered.subarray(9, 9 + length) };
      buffered = buffered.subarray(9 + length);
      if (frame.type === frameType.settings && !(frame.flags & 0x1)) socket.write(encodeFrame(frameType.settings, 0x1, 0));
      if (frame.streamId === 1) frames.push(frame);
    }
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  socket.write(
    Buffer.concat([
      preface,
      encodeFrame(frameType.settings, 0, 0),
      encodeFrame(frameType.headers, flagEndHeaders, 1, encodeHeaderBlock(fields)),
      encodeFrame(frameType.data, 0, 1, partialBody),
    ]),
  );
  await new Promise((resolve) => setTimeout(resolve, waitMs));
  const code = Buffer.alloc(4);
  code.writeUInt32BE(resetCode);
  socket.write(encodeFrame(frameType.rstStream, 0, 1, code));
  await new Promise((resolve) => setTimeout(resolve, 100));
  socket.destroy();
  return frames;
}
