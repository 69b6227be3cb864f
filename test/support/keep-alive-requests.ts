import http from "node:http";
import http2 from "node:http2";
import net from "node:net";

/**
 * Requests on connections the test keeps open (a keep-alive HTTP/1.1 agent, an
 * h2c session), for suites that watch what the server does with them.
 */

export interface Reply {
  status: number;
  contentType: string | undefined;
  body: unknown;
}

/** http1Request sends one request over HTTP/1.1 with node:http. */
export function http1Request(
  url: string,
  options: { method?: string; headers?: http.OutgoingHttpHeaders; agent?: http.Agent; body?: string } = {},
): Promise<Reply & { socket: net.Socket; httpVersion: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? "GET", headers: options.headers, agent: options.agent }, (res) => {
      // Read now: a keep-alive agent takes the socket back when the response ends.
      const socket = res.socket;
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({
          status: res.statusCode!,
          contentType: res.headers["content-type"],
          body: JSON.parse(Buffer.concat(chunks).toString("utf8")),
          socket,
          httpVersion: res.httpVersion,
        }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

/** http2Request sends one request on an open HTTP/2 session. */
export function http2Request(
  session: http2.ClientHttp2Session,
  path: string,
  headers: http2.OutgoingHttpHeaders = {},
  body?: string,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":method": "GET", ":path": path, ...headers });
    let responseHeaders: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on("response", (received) => {
      responseHeaders = received;
    });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () =>
      resolve({
        status: Number(responseHeaders[":status"]),
        contentType: responseHeaders["content-type"] as string | undefined,
        body: JSON.parse(Buffer.concat(chunks).toString("utf8")),
      }),
    );
    stream.on("error", reject);
    stream.end(body);
  });
}

/** connectH2c opens a prior-knowledge cleartext HTTP/2 session and waits until it is up. */
export async function connectH2c(url: string, options: http2.ClientSessionOptions = {}): Promise<http2.ClientHttp2Session> {
  const session = http2.connect(url, options);
  await new Promise<void>((resolve, reject) => {
    session.once("connect", () => resolve());
    session.once("error", reject);
  });
  return session;
}
