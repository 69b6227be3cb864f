/** What the drills read from a process through its inspector. */
export interface MemoryUsage {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

/** InspectorClient talks to a process started with --inspect, over the DevTools protocol. */
export interface InspectorClient {
  /** collectGarbage runs a full garbage collection in the process (HeapProfiler.collectGarbage). */
  collectGarbage(): Promise<void>;
  /** memoryUsage is process.memoryUsage() in the process. */
  memoryUsage(): Promise<MemoryUsage>;
  close(): void;
}

/**
 * connectInspector finds the "Debugger listening on ws://…" line a process
 * started with --inspect=127.0.0.1:0 writes to stderr, and connects to it.
 * A drill uses it to measure what the process still holds after an attack,
 * rather than garbage V8 has not yet had a reason to collect.
 */
export async function connectInspector(stderr: () => string, timeoutMs = 10_000): Promise<InspectorClient> {
  const deadline = performance.now() + timeoutMs;
  let url: string | undefined;
  while (!(url = /Debugger listening on (ws:\/\/\S+)/.exec(stderr())?.[1])) {
    if (performance.now() > deadline) throw new Error("the process did not announce its inspector (start it with --inspect=127.0.0.1:0)");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener("open", () => resolve(), { once: true });
    socket.addEventListener("error", () => reject(new Error(`cannot connect to the inspector at ${url}`)), { once: true });
  });
  let nextId = 1;
  const pending = new Map<number, { resolve(result: unknown): void; reject(error: Error): void }>();
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
    const waiter = message.id === undefined ? undefined : pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id!);
    if (message.error) waiter.reject(new Error(message.error.message));
    else waiter.resolve(message.result);
  });
  const call = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<unknown>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      socket.send(JSON.stringify({ id, method, params }));
    });
  return {
    async collectGarbage() {
      await call("HeapProfiler.collectGarbage");
    },
    async memoryUsage() {
      const result = (await call("Runtime.evaluate", { expression: "JSON.stringify(process.memoryUsage())", returnByValue: true })) as {
        result: { value: string };
      };
      return JSON.parse(result.result.value) as MemoryUsage;
    },
    close: () => socket.close(),
  };
}
