import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { summarizeCpuProfile } from "../support/cpu-profile.js";
import { backendTicksSpent } from "../support/database-cpu.js";
import { unexpectedOutcomes, type LoadResult } from "../support/load-result.js";
import { byThreadName } from "../support/measure.js";
import { cpuTicks, parseCpuTicks } from "../support/proc-stat.js";
import { median, spread } from "../support/stats.js";
import { localPorts, parseTcpTable } from "../support/tcp-ports.js";
import { parseChildTimes } from "../support/wrk.js";

const result = (outcomes: Record<string, number>, errors = 0): LoadResult => ({
  requests: Object.values(outcomes).reduce((a, b) => a + b, 0),
  seconds: 1,
  rps: 1,
  p50Ms: 1,
  p99Ms: 1,
  maxMs: 1,
  errors,
  outcomes,
});

describe("parseCpuTicks", () => {
  it("adds utime and stime (fields 14 and 15), counting fields after the command name's last ')'", () => {
    // A command name with spaces and parentheses must not shift the fields.
    const stat = "4242 (node (tsx) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 567 0 0 20 0 11 0 500 1000 200";
    assert.equal(parseCpuTicks(stat), 1234 + 567);
  });

  it("reads this process's own ticks from /proc, and nothing for a process that is gone", () => {
    assert.equal(typeof cpuTicks(process.pid), "number");
    assert.equal(cpuTicks(2 ** 22 + 1), undefined);
  });
});

describe("parseTcpTable and localPorts", () => {
  it("maps each socket inode to its local port", () => {
    const table = [
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
      "   0: 0100007F:1538 00000000:0000 0A 00000000:00000000 00:00000000 00000000   113        0 31337 1 0000000000000000 100 0 0 10 0",
      "   1: 0100007F:D431 0100007F:1538 01 00000000:00000000 00:00000000 00000000     0        0 4711 1 0000000000000000 20 4 30 10 -1",
    ].join("\n");
    assert.deepEqual([...parseTcpTable(table)], [
      [31337, 0x1538],
      [4711, 0xd431],
    ]);
  });

  it("finds the port of a connection this process holds", async () => {
    const net = await import("node:net");
    const server = net.createServer().listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    const socket = net.connect((server.address() as { port: number }).port, "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    try {
      assert.ok(localPorts(process.pid).includes(socket.localPort!));
    } finally {
      socket.destroy();
      server.close();
    }
  });
});

describe("backendTicksSpent", () => {
  it("counts a backend that appeared during the phase from zero and ignores one that went away", () => {
    const before = new Map([
      [10, 100],
      [11, 50],
    ]);
    const after = new Map([
      [10, 130],
      [12, 7],
    ]);
    assert.equal(backendTicksSpent(before, after), 30 + 7);
  });
});

describe("parseChildTimes", () => {
  it("reads the children's line of the shell's times", () => {
    assert.equal(parseChildTimes("0m0.010000s 0m0.000000s\n1m2.500000s 0m0.250000s\n"), 62.75);
  });
  it("refuses output it does not understand", () => {
    assert.throws(() => parseChildTimes("nothing"), /unreadable/);
  });
});

describe("unexpectedOutcomes", () => {
  it("passes a phase whose every answer is the expected one", () => {
    assert.equal(unexpectedOutcomes(result({ "201": 500 }), "201"), undefined);
  });
  it("fails replays, errors and silence", () => {
    assert.equal(unexpectedOutcomes(result({ "201": 5, "200": 3 }), "201"), "3 × 200");
    assert.equal(unexpectedOutcomes(result({ "201": 5 }, 2), "201"), "2 socket errors or timeouts");
    assert.equal(unexpectedOutcomes(result({}), "grpc-status 0"), "no grpc-status 0 at all");
  });
  it("lets a short warm-up end before its first answer, but not answer wrongly", () => {
    assert.equal(unexpectedOutcomes(result({}, 50), "200", false), undefined);
    assert.equal(unexpectedOutcomes(result({ "500": 1 }), "200", false), "1 × 500");
  });
});

describe("median and spread", () => {
  it("takes the middle value, or the mean of the middle two", () => {
    assert.equal(median([5, 1, 3]), 3);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.ok(Number.isNaN(median([])));
    assert.deepEqual(spread([3, NaN, 1, 2]), { median: 2, min: 1, max: 3 });
  });
});

describe("summarizeCpuProfile", () => {
  it("counts only the samples inside the windows", () => {
    const dir = mkdtempSync(join(tmpdir(), "bench-profile-test-"));
    try {
      const path = join(dir, "p.cpuprofile");
      const frame = (functionName: string) => ({ functionName, url: "file:///x/src/a.ts", lineNumber: 0 });
      writeFileSync(
        path,
        JSON.stringify({
          nodes: [
            { id: 1, callFrame: frame("startUp") },
            { id: 2, callFrame: frame("handle") },
            { id: 3, callFrame: { functionName: "(idle)", url: "", lineNumber: -1 } },
          ],
          startTime: 1_000,
          // Samples at 1,100 (startUp), 1,200 and 1,300 (handle), 1,350 (idle), 1,450 (startUp).
          samples: [1, 2, 2, 3, 1],
          timeDeltas: [100, 100, 100, 50, 100],
        }),
      );
      const all = summarizeCpuProfile(path);
      assert.equal(all.totalMs, 0.45);
      assert.equal(all.busyMs, 0.4);
      const measured = summarizeCpuProfile(path, 20, [{ startUs: 1_150, endUs: 1_360 }]);
      assert.equal(measured.totalMs, 0.25);
      // Shares are of the busy time: the idle sample is no one's cost.
      assert.deepEqual(
        measured.byArea.map((a) => [a.area, a.share]),
        [
          ["ours (src/)", 1],
          ["idle", 0.25],
        ],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("byThreadName", () => {
  it("adds up each thread's ticks by name as µs per request, counts a thread that started from zero, and leaves out idle ones", () => {
    const before = new Map([
      [1, { name: "MainThread", ticks: 100 }],
      [2, { name: "V8Worker", ticks: 10 }],
      [3, { name: "V8Worker", ticks: 20 }],
      [4, { name: "libuv-worker", ticks: 5 }],
    ]);
    const after = new Map([
      [1, { name: "MainThread", ticks: 160 }],
      [2, { name: "V8Worker", ticks: 14 }],
      [3, { name: "V8Worker", ticks: 26 }],
      [4, { name: "libuv-worker", ticks: 5 }],
      [5, { name: "webhook-deliver", ticks: 2 }],
    ]);
    // 100 ticks a second over 1,000 requests: a tick is 10 µs per request.
    const perRequest = (ticks: number) => (ticks / 100 / 1000) * 1e6;
    assert.deepEqual(byThreadName(before, after, perRequest), { MainThread: 600, V8Worker: 100, "webhook-deliver": 20 });
    assert.deepEqual(Object.keys(byThreadName(before, after, perRequest)), ["MainThread", "V8Worker", "webhook-deliver"]);
  });
});
