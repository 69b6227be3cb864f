import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { paymentIntentStatuses, type PaymentIntentStatus } from "../../src/domain/payment-intent.js";
import { assertTransition, canTransition } from "../../src/service/payment-state-machine.js";

/** The lifecycle of issues 4 and 19, written out as the full table of allowed moves. */
const allowed = new Set([
  "pending>processing",
  "pending>expired",
  "pending>cancelled",
  "processing>requires_action",
  "processing>successful",
  "processing>pending",
  "processing>failed",
  "requires_action>successful",
  "requires_action>pending",
  "requires_action>failed",
]);

describe("payment state machine", () => {
  for (const from of paymentIntentStatuses) {
    for (const to of paymentIntentStatuses) {
      const ok = allowed.has(`${from}>${to}`);
      it(`${ok ? "allows" : "refuses"} ${from} → ${to}`, () => {
        assert.equal(canTransition(from, to), ok);
        if (ok) {
          assert.doesNotThrow(() => assertTransition("pi_1", from, to));
        } else {
          assert.throws(
            () => assertTransition("pi_1", from, to),
            (error: unknown) => error instanceof ConnectError && error.code === Code.FailedPrecondition && error.rawMessage.startsWith(`payment intent pi_1 is ${from}`),
          );
        }
      });
    }
  }

  it("names the refused move in words a client understands", () => {
    const messages: [PaymentIntentStatus, PaymentIntentStatus, string][] = [
      ["successful", "cancelled", "payment intent pi_1 is successful and can no longer be deleted"],
      ["expired", "successful", "payment intent pi_1 is expired and can no longer be paid"],
      ["cancelled", "successful", "payment intent pi_1 is cancelled and can no longer be paid"],
      ["processing", "cancelled", "payment intent pi_1 is processing and can no longer be deleted"],
    ];
    for (const [from, to, message] of messages) {
      assert.throws(() => assertTransition("pi_1", from, to), (error: ConnectError) => error.rawMessage === message);
    }
  });
});
