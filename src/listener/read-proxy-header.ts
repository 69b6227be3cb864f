import type net from "node:net";
import { parseProxyHeader } from "./proxy-header.js";

export interface ReadProxyHeaderOptions {
  /** Longest the header may take to arrive, from the connection's start (HEADERS_TIMEOUT_MS). */
  timeoutMs: number;
  /** The header arrived: client is the address it carries (undefined: LOCAL or UNKNOWN, the peer stands). */
  onHeader(client: string | undefined): void;
  /** No valid header in time: the socket is already destroyed. */
  onRefused(reason: "proxy-header-timeout" | "proxy-header-invalid"): void;
}

/**
 * readProxyHeader reads the PROXY header a trusted balancer sends before
 * anything else, then hands the socket on with the bytes after it unread.
 * It buffers at most one header (107 bytes for v1, 16 + 2048 for v2: see
 * proxy-header.ts) and destroys the socket on the first byte that cannot
 * belong to a valid one, or when the header is not complete within the
 * timeout, so a slow or endless header holds a socket no longer than a slow
 * request's headers would.
 */
export function readProxyHeader(socket: net.Socket, options: ReadProxyHeaderOptions): void {
  let seen = Buffer.alloc(0);
  let done = false;
  const finish = () => {
    done = true;
    clearTimeout(timer);
    socket.off("data", onData);
  };
  const timer = setTimeout(() => {
    if (done) return;
    finish();
    socket.destroy();
    options.onRefused("proxy-header-timeout");
  }, options.timeoutMs);
  socket.once("close", () => clearTimeout(timer));
  const onData = (chunk: Buffer) => {
    seen = Buffer.concat([seen, chunk]);
    const result = parseProxyHeader(seen);
    if (result.kind === "incomplete") return;
    finish();
    if (result.kind === "invalid") {
      socket.destroy();
      options.onRefused("proxy-header-invalid");
      return;
    }
    socket.pause();
    const rest = seen.subarray(result.length);
    if (rest.length > 0) socket.unshift(rest);
    options.onHeader(result.client?.address);
  };
  socket.on("data", onData);
  socket.on("error", () => socket.destroy());
}
