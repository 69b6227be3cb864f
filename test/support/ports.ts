import net from "node:net";

/** freePort asks the kernel for a free port of 127.0.0.1 (it may be taken again before use; callers start at once). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** accepts: whether something accepts connections on 127.0.0.1:port now. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * waitForPort resolves once something accepts connections on 127.0.0.1:port;
 * it rejects (with what describe() says) when running() turns false or after
 * five seconds.
 */
export async function waitForPort(port: number, running: () => boolean, describe: () => string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    if (!running()) throw new Error(`exited before listening on ${port}: ${describe()}`);
    if (await accepts(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nothing listened on ${port} within 5 s: ${describe()}`);
}
