import { readFileSync } from "node:fs";

/** The parts of a V8 .cpuprofile (written by node --cpu-prof) this summary reads. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  /** When sampling began, µs of the monotonic clock (CLOCK_MONOTONIC, as process.hrtime). */
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A stretch of the monotonic clock, µs: a measured phase. */
export interface ProfileWindow {
  startUs: number;
  endUs: number;
}

export interface ProfileSummary {
  totalMs: number;
  /** totalMs without the idle samples; the shares are of this. */
  busyMs: number;
  /** Self time by where the code lives (our src/, connect, protobuf, ORM, Node core, GC, idle). */
  byArea: { area: string; ms: number; share: number }[];
  /** The functions with the most self time. */
  topFunctions: { name: string; where: string; ms: number; share: number }[];
}

/** areaOf names the package or layer a script URL belongs to. */
export function areaOf(functionName: string, url: string): string {
  if (functionName === "(garbage collector)") return "GC";
  if (functionName === "(idle)") return "idle";
  if (functionName === "(program)") return "V8/native (program)";
  if (url.startsWith("node:")) return "Node core (http, net, streams, crypto)";
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
  if (pkg) {
    if (pkg.startsWith("@connectrpc/")) return "connect-es";
    if (pkg.startsWith("@bufbuild/")) return "protobuf-es";
    if (pkg.startsWith("@mikro-orm/")) return "MikroORM";
    if (pkg === "kysely") return "Kysely";
    if (pkg.startsWith("pg") || pkg === "postgres-array" || pkg === "postgres-date") return "pg driver";
    return `other package (${pkg})`;
  }
  if (url.includes("/src/")) return "ours (src/)";
  if (url.includes("/gen/")) return "generated (gen/)";
  if (url === "") return "V8 builtins / native";
  return "other";
}

/**
 * summarizeCpuProfile reads a .cpuprofile and adds up self time by area and
 * by function; with windows, only the samples taken inside them (the measured
 * phases, not start-up, seeding or warm-up).
 */
export function summarizeCpuProfile(path: string, top = 20, windows?: ProfileWindow[]): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, "utf8")) as CpuProfile;
  const selfUs = new Map<number, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (windows && !windows.some((w) => at >= w.startUs && at <= w.endUs)) return;
    selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
  });
  const byArea = new Map<string, number>();
  const byFunction = new Map<string, { name: string; where: string; us: number }>();
  let totalUs = 0;
  for (const node of profile.nodes) {
    const us = selfUs.get(node.id) ?? 0;
    if (us === 0) continue;
    totalUs += us;
    const { functionName, url, lineNumber } = node.callFrame;
    const area = areaOf(functionName, url);
    byArea.set(area, (byArea.get(area) ?? 0) + us);
    const where = url === "" ? "" : `${url.replace(/^.*\/node_modules\//, "").replace(/^file:\/\/.*?\/(src|gen)\//, "$1/")}:${lineNumber + 1}`;
    const key = `${functionName}|${where}`;
    const entry = byFunction.get(key) ?? { name: functionName || "(anonymous)", where, us: 0 };
    entry.us += us;
    byFunction.set(key, entry);
  }
  // Shares of the time the process was busy: an idle moment (waiting for the database) is no one's cost.
  const busyUs = totalUs - (byArea.get("idle") ?? 0);
  const share = (us: number) => (busyUs === 0 ? 0 : us / busyUs);
  return {
    totalMs: totalUs / 1000,
    busyMs: busyUs / 1000,
    byArea: [...byArea.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([area, us]) => ({ area, ms: us / 1000, share: share(us) })),
    topFunctions: [...byFunction.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((f) => ({ name: f.name, where: f.where, ms: f.us / 1000, share: share(f.us) })),
  };
}

/** formatProfileSummary renders a summary as a few markdown lines. */
export function formatProfileSummary(title: string, summary: ProfileSummary): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const busy = summary.byArea.filter((a) => a.area !== "idle");
  return [
    `#### ${title} (${(summary.totalMs / 1000).toFixed(1)} s sampled, ${(summary.busyMs / 1000).toFixed(1)} s busy)`,
    "",
    "| Area | Share of busy time |",
    "|---|---:|",
    ...busy.map((a) => `| ${a.area} | ${pct(a.share)} |`),
    "",
    "| Function | Where | Share of busy time |",
    "|---|---|---:|",
    ...summary.topFunctions.filter((f) => f.name !== "(idle)").map((f) => `| \`${f.name}\` | ${f.where} | ${pct(f.share)} |`),
    "",
  ].join("\n");
}
