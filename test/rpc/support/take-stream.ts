import assert from "node:assert/strict";

/** take reads count messages from a stream, failing when they do not come within timeoutMs. */
export async function take<T>(stream: AsyncIterator<T>, count: number, timeoutMs = 5000): Promise<T[]> {
  const out: T[] = [];
  const deadline = Date.now() + timeoutMs;
  while (out.length < count) {
    let timer: NodeJS.Timeout | undefined;
    const next = await Promise.race([
      stream.next(),
      new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), Math.max(1, deadline - Date.now()));
      }),
    ]);
    clearTimeout(timer);
    if (next === "timeout") assert.fail(`only ${out.length} of ${count} events arrived within ${timeoutMs} ms`);
    if (next.done) assert.fail(`the stream ended after ${out.length} of ${count} events`);
    out.push(next.value);
  }
  return out;
}
