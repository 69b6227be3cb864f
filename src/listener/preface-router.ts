import type net from "node:net";
import { proxyV1Signature, proxyV2Signature, startsLike } from "./proxy-header.js";

/** The client connection preface every prior-knowledge HTTP/2 connection opens with (RFC 9113 §3.4). */
const http2Preface = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/** What a connection's first bytes say it speaks. "proxy": a PROXY header where none is expected. */
export type Preface = "http1" | "http2" | "proxy";

/**
 * routeByPreface reads until the first bytes either diverge from the HTTP/2
 * preface and from both PROXY header signatures, or complete one of them,
 * then hands the socket on with those bytes unread. A connection that has not
 * decided within timeoutMs is destroyed and onTimeout called: neither
 * server's timeouts can reach it yet.
 */
export function routeByPreface(
  socket: net.Socket,
  timeoutMs: number,
  decide: (preface: Preface) => void,
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
    const candidates: [Preface, Buffer][] = [
      ["http2", http2Preface],
      ["proxy", proxyV1Signature],
      ["proxy", proxyV2Signature],
    ];
    const alive = candidates.filter(([, signature]) => startsLike(seen, signature));
    if (alive.some(([, signature]) => seen.length < signature.length)) return;
    const preface = alive[0]?.[0] ?? "http1";
    socket.off("data", onData);
    clearTimeout(timer);
    socket.pause();
    socket.unshift(seen);
    decide(preface);
    // The HTTP/1.1 server reads through 'data' events and needs the stream
    // flowing; the http2 session drains the put-back bytes itself and must not
    // have them emitted to nobody.
    if (preface === "http1") socket.resume();
  };
  socket.on("data", onData);
  socket.on("error", () => socket.destroy());
}
