import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { onDeadline } from "../../src/protocols/rpc/deadline.js";

describe("onDeadline", () => {
  // Timers run on the monotonic clock, deadlines on the wall clock: when the
  // wall clock runs slow against it (slewed, or simply rounded differently),
  // a plain setTimeout(expire, deadline - Date.now()) fires before the
  // deadline. That is how a StreamEvents stream at its deadline could end OK
  // (issue 22 §3). Here the wall clock runs at 80 % speed.
  it("never calls expire before now() reaches the deadline, when timers run ahead of the wall clock", async () => {
    const start = Date.now();
    const slow = () => start + (Date.now() - start) * 0.8;
    const deadline = slow() + 50;
    const expiredAt = await new Promise<number>((resolve) => onDeadline(deadline, () => resolve(slow()), slow));
    assert.ok(expiredAt >= deadline, `expired ${deadline - expiredAt} ms early`);
  });

  it("expires at once for a deadline already passed, and never when cancelled or absent", async () => {
    let expired = 0;
    onDeadline(Date.now() - 1, () => expired++);
    assert.equal(expired, 1);
    const cancel = onDeadline(Date.now() + 20, () => expired++);
    cancel();
    onDeadline(undefined, () => expired++);
    // Beyond what a timer can wait (about 24.8 days): no timer that Node would clamp to 1 ms.
    onDeadline(Date.now() + 2 ** 31, () => expired++);
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.equal(expired, 1);
  });
});
