import net from "node:net";

/**
 * TcpProxy forwards 127.0.0.1:port to a target, and can be stopped (nothing
 * listens on the port, every forwarded connection is cut) and started again on
 * the same port: a database that goes away and comes back.
 */
export interface TcpProxy {
  readonly port: number;
  /**
   * Stops forwarding bytes either way, on open and new connections, without
   * closing anything: a database that no longer answers.
   */
  freeze(): void;
  /** Forwards again what froze, and everything after. */
  thaw(): void;
  /** Destroys every connection through it but keeps listening: a network blip. */
  cut(): void;
  /** Closes the listener and destroys every connection through it. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
}

/** createTcpProxy listens on a free port of 127.0.0.1 and forwards to target. */
export async function createTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  /** Each connection's two directions, which freeze() unpipes and thaw() pipes again. */
  const links = new Set<{ from: net.Socket; to: net.Socket }>();
  let frozen = false;
  let server: net.Server | undefined;
  let port = 0;

  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };

  const start = async () => {
    const listener = net.createServer((client) => {
      const upstream = net.connect(target.port, target.host);
      track(client);
      track(upstream);
      const pair = [
        { from: client, to: upstream },
        { from: upstream, to: client },
      ];
      for (const link of pair) {
        links.add(link);
        if (!frozen) link.from.pipe(link.to);
      }
      const end = () => {
        for (const link of pair) links.delete(link);
        client.destroy();
        upstream.destroy();
      };
      client.on("close", end);
      upstream.on("close", end);
    });
    await new Promise<void>((resolve, reject) => {
      listener.once("error", reject);
      listener.listen(port, "127.0.0.1", () => {
        listener.off("error", reject);
        resolve();
      });
    });
    port = (listener.address() as net.AddressInfo).port;
    server = listener;
  };

  await start();
  return {
    get port() {
      return port;
    },
    start,
    freeze() {
      frozen = true;
      for (const { from, to } of links) {
        from.unpipe(to);
        from.pause();
      }
    },
    thaw() {
      frozen = false;
      for (const { from, to } of links) from.pipe(to);
    },
    cut() {
      for (const socket of sockets) socket.destroy();
    },
    async stop() {
      const listener = server;
      server = undefined;
      const closed = listener ? new Promise<void>((resolve) => listener.close(() => resolve())) : Promise.resolve();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
