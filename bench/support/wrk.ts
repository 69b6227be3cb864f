import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LoadResult } from "./load-result.js";

/** The placeholder a body template carries where each request gets a unique value. */
export const uniquePlaceholder = "{{unique}}";

export interface WrkOptions {
  /** Absolute URL of the request. */
  url: string;
  method: "GET" | "POST";
  headers: Record<string, string>;
  /**
   * Body template; every {{unique}} becomes a value no other request of the
   * run carries (run id, thread, counter), so creates never replay.
   */
  body?: string;
  connections: number;
  durationSeconds: number;
  /** Distinguishes the unique values of separate runs on one server (warm-up, measurement). */
  runId: string;
}

/** wrkVersion is the first line of `wrk -v`, or undefined when wrk is not installed. */
export function wrkVersion(): string | undefined {
  const result = spawnSync("wrk", ["-v"], { encoding: "utf8" });
  if (result.error) return undefined;
  return `${result.stdout}${result.stderr}`.split("\n")[0]?.trim();
}

const luaString = (text: string) => `[==[${text}]==]`;

/** The Lua script: a unique body per request when the template asks for one, and a JSON summary at the end. */
function script(options: WrkOptions): string {
  const url = new URL(options.url);
  const lines = [
    `wrk.method = ${luaString(options.method)}`,
    `wrk.path = ${luaString(url.pathname + url.search)}`,
    ...Object.entries(options.headers).map(([name, value]) => `wrk.headers[ ${luaString(name)} ] = ${luaString(value)}`),
    "local threads = {}",
    "function setup(thread)",
    "  thread:set('tid', #threads)",
    "  table.insert(threads, thread)",
    "end",
  ];
  const body = options.body;
  if (body !== undefined && body.includes(uniquePlaceholder)) {
    const [prefix, ...rest] = body.split(uniquePlaceholder);
    lines.push(
      "local counter = 0",
      "local run_id = 'run'",
      "function init(args) run_id = args[1] or 'run' end",
      `local parts = { ${[prefix!, ...rest].map(luaString).join(", ")} }`,
      "function request()",
      "  counter = counter + 1",
      "  local unique = run_id .. '-' .. tid .. '-' .. counter",
      "  return wrk.format(nil, nil, nil, table.concat(parts, unique))",
      "end",
    );
  } else if (body !== undefined) {
    lines.push(`wrk.body = ${luaString(body)}`);
  }
  lines.push(
    // Every answer's status, so a scenario answering errors (or replays: 200 for a create) fails.
    "statuses = {}",
    "function response(status, headers, body)",
    "  statuses[status] = (statuses[status] or 0) + 1",
    "end",
    "function done(summary, latency, requests)",
    "  local e = summary.errors",
    "  local counts = {}",
    "  for _, thread in ipairs(threads) do",
    "    for status, n in pairs(thread:get('statuses')) do",
    "      table.insert(counts, string.format('\"%d\":%d', status, n))",
    "    end",
    "  end",
    "  io.write(string.format('WRKJSON {\"requests\":%d,\"durationUs\":%d,\"connect\":%d,\"read\":%d,\"write\":%d,\"status\":%d,\"timeout\":%d,\"p50\":%d,\"p99\":%d,\"max\":%d,\"statuses\":{%s}}\\n',",
    "    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,",
    "    latency:percentile(50), latency:percentile(99), latency.max, table.concat(counts, ',')))",
    "end",
  );
  return `${lines.join("\n")}\n`;
}

/**
 * parseChildTimes reads the children's user and system time (the second line
 * of the shell's `times`, "0m1.230000s 0m0.560000s") in seconds.
 */
export function parseChildTimes(text: string): number {
  const line = text.trim().split("\n")[1] ?? "";
  const parts = [...line.matchAll(/(\d+)m([\d.]+)s/g)];
  if (parts.length !== 2) throw new Error(`unreadable output of times: ${JSON.stringify(text)}`);
  return parts.reduce((sum, [, minutes, seconds]) => sum + Number(minutes) * 60 + Number(seconds), 0);
}

const timesMarker = "WRKTIMES";

/**
 * runWrk runs wrk (one thread: the other core is the server's) with
 * options.connections keep-alive connections and returns its figures, with
 * the CPU wrk itself used (from the shell's `times` after it exits) and the
 * count of every response status.
 */
export async function runWrk(options: WrkOptions): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), "bench-wrk-"));
  try {
    const scriptPath = join(dir, "script.lua");
    writeFileSync(scriptPath, script(options));
    const args = [
      "-t1",
      `-c${options.connections}`,
      `-d${options.durationSeconds}s`,
      "--timeout",
      "10s",
      "-s",
      scriptPath,
      options.url,
      "--",
      options.runId,
    ];
    const shell = `wrk "$@"; status=$?; echo ${timesMarker}; times; exit $status`;
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile("sh", ["-c", shell, "sh", ...args], { encoding: "utf8", timeout: (options.durationSeconds + 30) * 1000 }, (error, out, err) => {
        // wrk reports a script error on stderr and carries on with a default GET: never measure that.
        if (error || err.trim() !== "") reject(new Error(`wrk failed: ${error?.message ?? "script error"}\n${out}\n${err}`));
        else resolve(out);
      });
    });
    const line = stdout.split("\n").find((l) => l.startsWith("WRKJSON "));
    if (!line) throw new Error(`wrk printed no summary:\n${stdout}`);
    const raw = JSON.parse(line.slice("WRKJSON ".length)) as Record<string, number> & { statuses: Record<string, number> };
    const seconds = raw["durationUs"]! / 1e6;
    const socketErrors = raw["connect"]! + raw["read"]! + raw["write"]! + raw["timeout"]!;
    return {
      requests: raw["requests"]!,
      seconds,
      rps: raw["requests"]! / seconds,
      p50Ms: raw["p50"]! / 1000,
      p99Ms: raw["p99"]! / 1000,
      maxMs: raw["max"]! / 1000,
      errors: socketErrors,
      outcomes: raw.statuses,
      generatorCpuSeconds: parseChildTimes(stdout.slice(stdout.indexOf(timesMarker) + timesMarker.length)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
