/**
 * What a key's own limits cost the server per request (issue 23, §2): CPU
 * (utime + stime of the server process, /proc/<pid>/stat) per authenticated
 * GET /v2/payment-intents, for a key made through the key API with no
 * limits against one with scopes and three client networks, alternated in
 * one run; medians of the rounds. In-memory stores.
 *
 *   npm run bench:keys [-- --rounds 8 --requests 3000]
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { newApiKey } from "../src/auth/api-key-format.js";
import { startServerProcess } from "../test/support/server-process.js";

const { values } = parseArgs({ options: { rounds: { type: "string", default: "8" }, requests: { type: "string", default: "3000" } } });
const rounds = Number(values.rounds);
const requests = Number(values.requests);
const concurrency = 16;

/** utime + stime of a process, in clock ticks (fields 14 and 15 of /proc/<pid>/stat). */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const operatorKey = newApiKey("test");
const server = await startServerProcess({ apiKeys: `bench:${operatorKey}`, startTimeoutMs: 60_000 });
try {
  const url = `${server.url}/v1/v2`;
  const make = async (body: unknown) => {
    const res = await fetch(`${url}/api-keys`, { method: "POST", headers: { authorization: `Bearer ${operatorKey}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    if (res.status !== 201) throw new Error(`make key: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { secret: string }).secret;
  };
  const variants: Record<string, string> = {
    "no limits": await make({ name: "plain" }),
    "scopes + 3 networks": await make({ name: "limited", scopes: ["payment_intents:read", "refunds:read"], allowedCidrs: ["10.0.0.0/8", "2001:db8::/32", "127.0.0.0/8"] }),
  };
  const run = async (key: string, n: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < n) {
          const res = await fetch(`${url}/payment-intents?pageSize=1`, { headers: { authorization: `Bearer ${key}` } });
          if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
          await res.arrayBuffer();
        }
      }),
    );
  };
  const pid = server.child.pid!;
  for (const key of Object.values(variants)) await run(key, 1000);
  const perRequest: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? Object.entries(variants) : Object.entries(variants).reverse();
    for (const [name, key] of order) {
      const before = cpuTicks(pid);
      await run(key, requests);
      // A tick is 10 ms (CLK_TCK 100): µs of server CPU per request.
      perRequest[name]!.push(((cpuTicks(pid) - before) * 10_000) / requests);
    }
  }
  const load = loadavg().map((x) => x.toFixed(2)).join(" ");
  for (const [name, xs] of Object.entries(perRequest)) {
    process.stdout.write(`${name}: median ${median(xs).toFixed(1)} µs CPU/request (rounds: ${xs.map((x) => x.toFixed(0)).join(", ")})\n`);
  }
  process.stdout.write(`${rounds} rounds × ${requests} requests each, concurrency ${concurrency}; load average ${load}\n`);
} finally {
  await server.stop();
}
