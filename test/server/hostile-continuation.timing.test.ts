import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { answering, frame, h2, literalHeader, openRawH2, requestHeaderBlock, startListener, within } from "./support/hostile-clients.js";

// Timing tier (test:all): what tells our headers timeout from nghttp2's own
// CONTINUATION cap is when the connection closes, so this one is timed.

describe("HTTP/2 header blocks, timed", () => {
  it("counts the header block from its first frame, however its CONTINUATION frames trickle in", async () => {
    const listener = await startListener(answering("ok"), { headersTimeoutMs: 300, idleTimeoutMs: 60_000, requestTimeoutMs: 60_000 });
    try {
      const client = await openRawH2(listener.port);
      client.send(frame(h2.HEADERS, h2.END_STREAM, 1, requestHeaderBlock("/")));
      // One CONTINUATION every 150 ms: nghttp2's own cap (8 CONTINUATION
      // frames, against CVE-2024-27316) would only end this after 1.2 s.
      const trickle = setInterval(() => {
        if (!client.isClosed()) client.send(frame(h2.CONTINUATION, 0, 1, literalHeader("x-slow", "1")));
      }, 150);
      try {
        const took = await within(client.closed, 3000, "destroying the connection trickling CONTINUATION frames");
        assert.ok(took >= 250 && took < 1100, `closed after ${Math.round(took)} ms`);
        assert.deepEqual(listener.dropped, [{ reason: "headers-timeout", protocol: "http2" }]);
      } finally {
        clearInterval(trickle);
      }
    } finally {
      await listener.close();
    }
  });
});
