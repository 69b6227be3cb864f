import http from "node:http";
import http2 from "node:http2";
import { Code } from "@connectrpc/connect";
import { codeFromString } from "@connectrpc/connect/protocol-connect";

/**
 * Helpers that speak the protocols byte for byte, without a client library
 * in between that would normalise the request (resolve "..", refuse a
 * repeated header, frame the message properly) or interpret the answer.
 */

/** A finished HTTP exchange with its body as bytes. */
export interface WireResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** HTTP/2 trailers (empty over HTTP/1.1, where gRPC-Web carries them in the body). */
  trailers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/**
 * http1 sends one HTTP/1.1 request with the target exactly as given (Node's
 * http.request does not resolve dot segments in `path`). headers may be a
 * flat [name, value, name, value, …] list to repeat a header (Host is added,
 * as Node does for an object).
 */
export function http1(port: number, method: string, target: string, headers: Record<string, string> | string[] = {}, body?: Uint8Array | string): Promise<WireResponse> {
  const list = Array.isArray(headers) ? ["Host", `127.0.0.1:${port}`, ...headers] : headers;
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method, path: target, headers: list, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, trailers: {}, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * http2Request sends one request over a fresh prior-knowledge HTTP/2
 * connection. With leaveOpen the body is written but the request side never
 * ended, as a client stream's or a unary call's that never half-closes.
 */
export function http2Request(
  port: number,
  method: string,
  target: string,
  headers: Record<string, string> = {},
  body?: Uint8Array,
  { leaveOpen = false }: { leaveOpen?: boolean } = {},
): Promise<WireResponse> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on("error", reject);
    const stream = session.request({ ":method": method, ":path": target, ...headers });
    let status = 0;
    let responseHeaders: WireResponse["headers"] = {};
    let trailers: WireResponse["trailers"] = {};
    const chunks: Buffer[] = [];
    stream.on("response", (received) => {
      status = Number(received[":status"]);
      responseHeaders = { ...received };
    });
    stream.on("trailers", (received) => {
      trailers = { ...received };
    });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => {
      // A request side left open would hold close() up forever.
      if (leaveOpen) session.destroy();
      else session.close();
      resolve({ status, headers: responseHeaders, trailers, body: Buffer.concat(chunks) });
    });
    stream.on("error", (error) => {
      session.destroy();
      reject(error);
    });
    if (leaveOpen) stream.write(body ?? new Uint8Array());
    else stream.end(body);
  });
}

/** envelope frames one message as gRPC, gRPC-Web and Connect streaming do: flags, 4-byte length, data. */
export function envelope(flags: number, data: Uint8Array): Buffer {
  const frame = Buffer.alloc(5 + data.byteLength);
  frame[0] = flags;
  frame.writeUInt32BE(data.byteLength, 1);
  frame.set(data, 5);
  return frame;
}

/** splitEnvelopes reads a body of whole envelopes; a trailing partial frame fails the test. */
export function splitEnvelopes(body: Buffer): { flags: number; data: Buffer }[] {
  const out: { flags: number; data: Buffer }[] = [];
  let at = 0;
  while (at < body.length) {
    if (body.length - at < 5) throw new Error(`a partial envelope header at byte ${at}`);
    const length = body.readUInt32BE(at + 1);
    if (body.length - at - 5 < length) throw new Error(`a partial envelope at byte ${at}`);
    out.push({ flags: body[at]!, data: body.subarray(at + 5, at + 5 + length) });
    at += 5 + length;
  }
  return out;
}

/** RpcOutcome is what an RPC answered, read the way its protocol says. */
export interface RpcOutcome {
  /** The HTTP status (gRPC and gRPC-Web answer errors with 200). */
  status: number;
  /** The Code's name ("InvalidArgument"), or "OK". */
  code: string;
  /** The error message as a conforming client shows it (grpc-message percent-decoded). */
  message: string;
  /** Response messages (gRPC, gRPC-Web: the frames' data; Connect unary: the body on success). */
  messages: Buffer[];
  response: WireResponse;
}

/**
 * decodeGrpcMessage undoes grpc-message's percent-encoding the way the gRPC
 * spec defines it (doc/PROTOCOL-HTTP2.md): %XX sequences are UTF-8 bytes;
 * anything else is itself.
 */
export function decodeGrpcMessage(value: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < value.length; i++) {
    if (value[i] === "%" && /^[0-9A-Fa-f]{2}$/.test(value.slice(i + 1, i + 3))) {
      bytes.push(parseInt(value.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(value.charCodeAt(i));
    }
  }
  return Buffer.from(bytes).toString("utf8");
}

const codeName = (code: number): string => (code === 0 ? "OK" : Code[code]!);

/** connectOutcome reads a Connect unary answer: HTTP status and {code, message} on error. */
export function connectOutcome(response: WireResponse): RpcOutcome {
  if (response.status === 200) return { status: 200, code: "OK", message: "", messages: [response.body], response };
  const body = JSON.parse(response.body.toString("utf8")) as { code: string; message?: string };
  const code = codeFromString(body.code);
  if (code === undefined) throw new Error(`not a Connect error body: ${response.body.toString("utf8")}`);
  return { status: response.status, code: codeName(code), message: body.message ?? "", messages: [], response };
}

/** grpcOutcome reads a gRPC answer: the status in the trailers, or in the headers of a Trailers-Only response. */
export function grpcOutcome(response: WireResponse): RpcOutcome {
  const source = response.trailers["grpc-status"] !== undefined ? response.trailers : response.headers;
  const status = source["grpc-status"];
  if (typeof status !== "string") throw new Error(`no grpc-status in ${JSON.stringify(response.headers)} / ${JSON.stringify(response.trailers)}`);
  const message = source["grpc-message"];
  return {
    status: response.status,
    code: codeName(Number(status)),
    message: typeof message === "string" ? decodeGrpcMessage(message) : "",
    messages: splitEnvelopes(response.body).map((e) => e.data),
    response,
  };
}

/** grpcWebOutcome reads a gRPC-Web answer: message frames, then the trailer frame (flag 0x80). */
export function grpcWebOutcome(response: WireResponse, text = false): RpcOutcome {
  const body = text ? Buffer.from(response.body.toString("latin1"), "base64") : response.body;
  const frames = splitEnvelopes(body);
  const trailer = frames.find((f) => f.flags & 0x80);
  if (!trailer) throw new Error(`no trailer frame in ${JSON.stringify(body.toString("latin1"))}`);
  const fields = new Map<string, string>();
  for (const line of trailer.data.toString("latin1").split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0) fields.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return {
    status: response.status,
    code: codeName(Number(fields.get("grpc-status"))),
    message: decodeGrpcMessage(fields.get("grpc-message") ?? ""),
    messages: frames.filter((f) => !(f.flags & 0x80)).map((f) => f.data),
    response,
  };
}

/** The RPC protocols as a client reaches them on the wire, for tables of cases. */
export interface WireProtocol {
  name: string;
  /** The protocol label the request log gives it. */
  label: "connect" | "grpc" | "grpc-web";
  /** Whether the request message is binary protobuf (else proto3 JSON). */
  binary: boolean;
  /** Whether the message travels in an envelope (whose flags the caller sets). */
  enveloped: boolean;
  /** Sends one request message (already enveloped when the protocol wants it) and reads the answer. */
  call(port: number, path: string, payload: Buffer, headers?: Record<string, string>): Promise<RpcOutcome>;
}

export const wireProtocols: WireProtocol[] = [
  {
    name: "Connect binary (HTTP/1.1)",
    label: "connect",
    binary: true,
    enveloped: false,
    call: async (port, path, payload, headers = {}) =>
      connectOutcome(await http1(port, "POST", path, { "content-type": "application/proto", ...headers }, payload)),
  },
  {
    name: "Connect JSON (HTTP/1.1)",
    label: "connect",
    binary: false,
    enveloped: false,
    call: async (port, path, payload, headers = {}) =>
      connectOutcome(await http1(port, "POST", path, { "content-type": "application/json", ...headers }, payload)),
  },
  {
    name: "gRPC (HTTP/2)",
    label: "grpc",
    binary: true,
    enveloped: true,
    call: async (port, path, payload, headers = {}) =>
      grpcOutcome(await http2Request(port, "POST", path, { "content-type": "application/grpc", te: "trailers", ...headers }, payload)),
  },
  {
    name: "gRPC-Web binary (HTTP/1.1)",
    label: "grpc-web",
    binary: true,
    enveloped: true,
    call: async (port, path, payload, headers = {}) =>
      grpcWebOutcome(await http1(port, "POST", path, { "content-type": "application/grpc-web+proto", "x-grpc-web": "1", ...headers }, payload)),
  },
  {
    name: "gRPC-Web text (HTTP/1.1)",
    label: "grpc-web",
    binary: true,
    enveloped: true,
    call: async (port, path, payload, headers = {}) =>
      grpcWebOutcome(
        await http1(port, "POST", path, { "content-type": "application/grpc-web-text", "x-grpc-web": "1", ...headers }, payload.toString("base64")),
        true,
      ),
  },
];
