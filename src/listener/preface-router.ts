import type net from "node:net";

/** The client connection preface every prior-knowledge HTTP/2 connection opens with (RFC 9113 §3.4). */
const http2Preface = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/**
 * routeByPreface reads until the first bytes either diverge from the HTTP/2
 * preface or complete it, then hands the socket on with those bytes unread.
 * A connection that has not decided within timeoutMs is destroyed and
 * onTimeout called: neither server's timeouts can reach it yet.
 */
export function routeByPreface(
  socket: net.Socket,
  timeoutMs: number,
  decide: (isHttp2: boolean) => void,
  onTimeout: () => void,
): void {
  let seen = Buffer.alloc(0);
  const timer = setTimeout(() => {
    socket.destroy();
    onTimeout();
  }, timeoutMs);
  socket.once("close", () => clearTimeout(timer));
  const onData = (chunk: Buffer) => {
    seen = Buffer.concat([seen, chunk]);
    const compared = Math.min(seen.length, http2Preface.length);
    const isHttp2 = seen.subarray(0, compared).equals(http2Preface.subarray(0, compared));
    if (isHttp2 && seen.length < http2Preface.length) return;
    socket.off("data", onData);
    clearTimeout(timer);
    socket.pause();
    socket.unshift(seen);
    decide(isHttp2);
    // The HTTP/1.1 server reads through 'data' events and needs the stream
    // flowing; the http2 session drains the put-back bytes itself and must not
    // have them emitted to nobody.
    if (!isHttp2) socket.resume();
  };
  socket.on("data", onData);
  socket.on("error", () => socket.destroy());
}
