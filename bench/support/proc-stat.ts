import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";

/**
 * Clock ticks per second of /proc/<pid>/stat's time fields (`getconf CLK_TCK`,
 * 100 on Linux here): one tick is the resolution of every CPU figure the bench
 * reports, so each measured phase must last many of them.
 */
export function readClockTicksPerSecond(): number {
  const ticks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());
  if (!Number.isInteger(ticks) || ticks <= 0) throw new Error(`getconf CLK_TCK printed ${ticks}`);
  return ticks;
}

/**
 * parseCpuTicks reads utime + stime (fields 14 and 15, proc(5)) from the text
 * of /proc/<pid>/stat. Field 2 (the command name) is in parentheses and may
 * hold spaces or parentheses itself, so fields are counted after its last ')'.
 */
export function parseCpuTicks(stat: string): number {
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // rest[0] is field 3 (state): field n is rest[n - 3].
  const utime = Number(rest[14 - 3]);
  const stime = Number(rest[15 - 3]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error(`unreadable /proc stat line: ${stat.slice(0, 200)}`);
  return utime + stime;
}

/** cpuTicks is a process's user + system CPU time so far, in clock ticks; undefined once it is gone. */
export function cpuTicks(pid: number): number | undefined {
  try {
    return parseCpuTicks(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return undefined;
  }
}

/**
 * threadCpuTicks is one thread's user + system CPU time so far, in clock
 * ticks (/proc/<pid>/task/<tid>/stat); the main thread's tid is the pid.
 * undefined once it is gone.
 */
export function threadCpuTicks(pid: number, tid: number): number | undefined {
  try {
    return parseCpuTicks(readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8"));
  } catch {
    return undefined;
  }
}

/** threadTicks: every thread's CPU ticks so far, by tid, with its name (/proc/<pid>/task/<tid>/comm). */
export function threadTicks(pid: number): Map<number, { name: string; ticks: number }> {
  const out = new Map<number, { name: string; ticks: number }>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
      out.set(Number(tid), { name, ticks: parseCpuTicks(readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8")) });
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}
