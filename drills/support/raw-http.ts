import net from "node:net";

/** RawResponse is an HTTP/1.1 response read off the wire. */
export interface RawResponse {
  status: number;
  /** Header names lower-cased; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
}

export interface RawRequest {
  method: string;
  /** The request-target exactly as sent: any bytes, unescaped. */
  target: string;
  /** Header lines as sent; name and value are written as latin1 bytes. */
  headers: [string, string][];
  body?: Buffer;
}

/**
 * sendRaw writes one HTTP/1.1 request byte for byte on a fresh connection
 * (Connection: close) and reads the whole answer. fetch and node:http refuse
 * to send malformed targets and header values; a hostile client does not.
 * Rejects when the connection fails or no full answer arrives within timeoutMs.
 */
export function sendRaw(url: string, request: RawRequest, timeoutMs = 10_000): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  const head = [
    `${request.method} ${request.target} HTTP/1.1`,
    `host: ${hostname}:${port}`,
    ...request.headers.map(([name, value]) => `${name}: ${value}`),
    ...(request.body ? [`content-length: ${request.body.length}`] : []),
    "connection: close",
    "",
    "",
  ].join("\r\n");
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms to ${request.method} ${JSON.stringify(request.target)}`));
    }, timeoutMs);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", (error) => {
      clearTimeout(timer);
      // A reset after a whole answer (a server closing on a client still
      // sending) still delivered the answer.
      try {
        resolve(parseResponse(Buffer.concat(chunks), request.method === "HEAD", true));
      } catch {
        reject(error);
      }
    });
    socket.on("close", () => {
      clearTimeout(timer);
      try {
        resolve(parseResponse(Buffer.concat(chunks), request.method === "HEAD"));
      } catch (error) {
        reject(error);
      }
    });
    socket.write(Buffer.from(head, "latin1"));
    if (request.body) socket.write(request.body);
  });
}

/** parseResponse reads status, headers and (content-length or chunked) body. */
function parseResponse(raw: Buffer, isHead: boolean, mustBeWhole = false): RawResponse {
  const end = raw.indexOf("\r\n\r\n");
  if (end < 0) throw new Error(`incomplete response (${raw.length} bytes): ${JSON.stringify(raw.toString("latin1").slice(0, 200))}`);
  const [statusLine, ...lines] = raw.subarray(0, end).toString("latin1").split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? "")?.[1]);
  if (!Number.isInteger(status)) throw new Error(`bad status line: ${JSON.stringify(statusLine)}`);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  let body = raw.subarray(end + 4);
  if (isHead) body = Buffer.alloc(0);
  else if (/chunked/i.test(headers["transfer-encoding"] ?? "")) body = dechunk(body);
  else if (headers["content-length"] !== undefined) {
    if (mustBeWhole && body.length < Number(headers["content-length"])) throw new Error("incomplete body");
    body = body.subarray(0, Number(headers["content-length"]));
  } else if (mustBeWhole) {
    throw new Error("no length: cannot tell a whole answer");
  }
  return { status, headers, body };
}

function dechunk(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  while (at < data.length) {
    const lineEnd = data.indexOf("\r\n", at);
    if (lineEnd < 0) break;
    const size = parseInt(data.subarray(at, lineEnd).toString("latin1"), 16);
    if (!(size > 0)) break;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}
