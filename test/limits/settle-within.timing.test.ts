import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import { settleWithin, type Settled } from "../../src/limits/settle-within.js";

/** busyWait holds the event loop, as a CPU-starved or GC-paused process does. */
function busyWait(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe("settleWithin", () => {
  it("passes on a value or a rejection that comes in time", async () => {
    assert.deepEqual(await settleWithin(Promise.resolve(7), 50), { status: "fulfilled", value: 7 });
    const error = new Error("refused");
    assert.deepEqual(await settleWithin(Promise.reject(error), 50), { status: "rejected", reason: error });
  });

  it("says late once the time is up, and stops waiting", async () => {
    const started = performance.now();
    assert.deepEqual(await settleWithin(new Promise(() => {}), 50), { status: "late" });
    const took = performance.now() - started;
    assert.ok(took >= 45 && took < 500, `took ${took} ms`);
  });

  it("does not call an answer late when it arrived while the event loop was held up past the deadline", async () => {
    // Another process answers (as Redis would): cat echoes what it is sent.
    const echo = spawn("cat", [], { stdio: ["pipe", "pipe", "ignore"] });
    try {
      const reply = new Promise<string>((resolve) => echo.stdout.once("data", (data: Buffer) => resolve(data.toString())));
      // Started in the check phase, so the timers phase comes before the next poll:
      // the order in which an expired plain timer would win over the waiting answer.
      const outcome = await new Promise<Promise<Settled<string>>>((resolve) =>
        setImmediate(() => {
          echo.stdin.write("pong");
          const settling = settleWithin(reply, 50);
          // The echo comes back at once, but this process cannot read it for 300 ms.
          busyWait(300);
          resolve(settling);
        }),
      );
      assert.deepEqual(await outcome, { status: "fulfilled", value: "pong" });
    } finally {
      echo.kill();
    }
  });
});
