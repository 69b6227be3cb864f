import { randomUUID } from "node:crypto";
import net from "node:net";
import { chooseRequestId } from "../observability/request-id.js";
import { createConnectionCaps } from "./connection-caps.js";
import { createConnectionSweep } from "./connection-sweep.js";
import { createHttp1Connections } from "./http1-connections.js";
import { createHttp2Sessions } from "./http2-sessions.js";
import type { ListenerEvents } from "./listener-events.js";
import { defaultListenLimits, type ListenLimits } from "./listen-limits.js";
import type { NodeHandler } from "../http/node-http.js";
import { routeByPreface } from "./preface-router.js";
import { readProxyHeader } from "./read-proxy-header.js";
import type { TrustedProxies } from "./trusted-proxies.js";
import { setClientAddress } from "../http/client-address.js";

export interface ListenOptions extends ListenerEvents {
  host: string;
  /** 0 picks a free port: what tests use. */
  port: number;
  /** Limits against slow and greedy clients; each defaults to defaultListenLimits. */
  limits?: Partial<ListenLimits>;
  /** Makes the X-Request-Id of an answer the listener writes itself when the client sent none; a random UUID by default. */
  generateRequestId?: () => string;
  /**
   * Peers that must open every connection with a PROXY header (v1 or v2)
   * naming the client (TRUSTED_PROXIES). From anyone else a PROXY header is
   * refused; absent, nobody is trusted.
   */
  trustedProxies?: TrustedProxies;
}

/** ListeningServer is a bound server; close() ends every connection and resolves when the port is free. */
export interface ListeningServer {
  readonly host: string;
  readonly port: number;
  /** http://host:port of the bound address. */
  readonly url: string;
  /**
   * Stops accepting connections, sends HTTP/2 sessions GOAWAY, closes idle
   * connections, lets requests in flight finish for up to graceMs (default
   * 2000), then ends whatever is left.
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

/**
 * listen serves handler for HTTP/1.1 and cleartext HTTP/2 on one port. Node's
 * cleartext HTTP/2 server cannot fall back to HTTP/1.1, so each connection is
 * routed by its first bytes: the HTTP/2 preface goes to the http2 server
 * (gRPC, Connect and REST over h2c), anything else to the HTTP/1.1 server
 * (REST, Connect, gRPC-Web). Before a byte is read, the connection caps
 * refuse a connection over the total or its address's share. A peer in
 * trustedProxies must first send a PROXY header (read-proxy-header.ts),
 * whose client address then stands for the connection's, in the per-address
 * share too. What each
 * protocol bounds beyond Node's defaults is in http1-connections.ts and
 * http2-sessions.ts; both report what they answer or cut themselves through
 * onRefused and onConnectionDropped.
 */
export async function listen(handler: NodeHandler, options: ListenOptions): Promise<ListeningServer> {
  const listener = await openListener(options);
  listener.serve(handler);
  return listener;
}

/** OpenListener is a bound port whose app is attached by serve(). */
export interface OpenListener extends ListeningServer {
  /** Attaches the app: every request from now on goes to handler. */
  serve(handler: NodeHandler): void;
}

/**
 * openListener binds the port before the app exists, so that a service on
 * PORT=0 knows its URL (the origin of every checkoutLink) while it is being
 * built. Until serve() attaches the app, a request is answered 503, as
 * /readyz answers while starting; with PORT=0 nobody knows the port yet.
 */
export async function openListener(options: ListenOptions): Promise<OpenListener> {
  let app: NodeHandler = (_req, res) => {
    res.writeHead(503);
    res.end();
  };
  const handler: NodeHandler = (req, res) => app(req, res);
  const limits = { ...defaultListenLimits, ...options.limits };
  const events: ListenerEvents = { onRefused: options.onRefused, onConnectionDropped: options.onConnectionDropped };
  const generate = options.generateRequestId ?? randomUUID;
  const requestId = (header: string | string[] | undefined) => chooseRequestId(header, generate);
  const now = () => performance.now();
  // A quarter of the shortest deadline: how late a deadline may be noticed.
  const sweep = createConnectionSweep(
    Math.max(10, Math.min(1000, Math.floor(Math.min(limits.headersTimeoutMs, limits.writeTimeoutMs, limits.idleTimeoutMs) / 4))),
    now,
  );
  const caps = createConnectionCaps(limits);
  const http1 = createHttp1Connections({ handler, limits, events, requestId, sweep, now });
  const http2 = createHttp2Sessions({ handler, limits, events, requestId, sweep, now });

  const sockets = new Set<net.Socket>();
  /** Connections whose first bytes have not yet said which protocol they speak. */
  const unrouted = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    const address = socket.remoteAddress;
    const balanced = address !== undefined && options.trustedProxies?.trusts(address) === true;
    const refusal = balanced ? caps.admitFromBalancer(address) : caps.admit(address);
    if (refusal || address === undefined) {
      socket.on("error", () => {});
      socket.destroy();
      events.onConnectionDropped?.({ reason: refusal ?? "max-connections" });
      return;
    }
    sockets.add(socket);
    unrouted.add(socket);
    /** The client whose share this balanced connection holds, once its PROXY header named it. */
    let sharedBy: string | undefined;
    socket.once("close", () => {
      sockets.delete(socket);
      unrouted.delete(socket);
      if (balanced) caps.releaseBalanced(sharedBy);
      else caps.release(address);
    });
    const route = (timeoutMs: number) =>
      routeByPreface(
        socket,
        timeoutMs,
        (preface) => {
          unrouted.delete(socket);
          if (preface === "http2") http2.take(socket);
          else if (preface === "http1") http1.take(socket);
          else {
            // A PROXY header from a peer not trusted to speak for others: it could name any address.
            socket.destroy();
            events.onConnectionDropped?.({ reason: "proxy-header-untrusted" });
          }
        },
        () => events.onConnectionDropped?.({ reason: "headers-timeout" }),
      );
    if (!balanced) return route(limits.headersTimeoutMs);
    // A trusted balancer must say whom the connection is for, within the headers timeout.
    const acceptedAt = now();
    readProxyHeader(socket, {
      timeoutMs: limits.headersTimeoutMs,
      onHeader(client) {
        // The client's share of connections, as if it had connected itself (a health check's LOCAL header: the balancer's).
        const shareOf = client ?? address;
        if (caps.admitClient(shareOf)) {
          socket.destroy();
          events.onConnectionDropped?.({ reason: "max-connections-per-address" });
          return;
        }
        sharedBy = shareOf;
        if (client !== undefined) setClientAddress(socket, client);
        route(Math.max(1, limits.headersTimeoutMs - Math.round(now() - acceptedAt)));
        socket.resume();
      },
      onRefused: (reason) => events.onConnectionDropped?.({ reason }),
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as net.AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;

  return {
    serve(attached) {
      app = attached;
    },
    host: address.address,
    port: address.port,
    url: `http://${host}:${address.port}`,
    async close({ graceMs = 2000 } = {}) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Idle connections go now; busy ones when their response is done.
      // session.close() sends GOAWAY and lets the session's open streams finish.
      http2.beginClose();
      http1.beginClose();
      for (const socket of unrouted) socket.destroy();
      await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
      for (const socket of sockets) socket.destroy();
      await closed;
      sweep.stop();
      // Stops the timeout bookkeeping started by the 'listening' in http1-connections.ts.
      http1.close();
    },
  };
}
