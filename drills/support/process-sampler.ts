import { readdirSync, readFileSync } from "node:fs";

/** ProcessSample is one look at a process: resident memory and open descriptors. */
export interface ProcessSample {
  /** performance.now() when taken. */
  at: number;
  rssBytes: number;
  fds: number;
}

/** sampleProcess reads VmRSS from /proc/<pid>/status and counts /proc/<pid>/fd (Linux). */
export function sampleProcess(pid: number): ProcessSample {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const rssKb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN);
  return { at: performance.now(), rssBytes: rssKb * 1024, fds: readdirSync(`/proc/${pid}/fd`).length };
}

/** ProcessSampler samples a process on a timer and keeps every sample. */
export interface ProcessSampler {
  samples: ProcessSample[];
  /** The samples taken between from and to (performance.now() times). */
  between(from: number, to: number): ProcessSample[];
  stop(): void;
}

/** startProcessSampler samples pid every intervalMs until stop(). */
export function startProcessSampler(pid: number, intervalMs: number): ProcessSampler {
  const samples: ProcessSample[] = [sampleProcess(pid)];
  const timer = setInterval(() => {
    try {
      samples.push(sampleProcess(pid));
    } catch {
      // The process has exited: the drill reports that on its own.
    }
  }, intervalMs);
  return {
    samples,
    between: (from, to) => samples.filter((s) => s.at >= from && s.at <= to),
    stop: () => clearInterval(timer),
  };
}

/**
 * acceptQueue is how many connections wait in the kernel for the process
 * listening on port to accept them (Linux: rx_queue of the LISTEN socket in
 * /proc/net/tcp). A server whose descriptors are back at the baseline has
 * only let go of its connections if none is still waiting here.
 */
export function acceptQueue(port: number): number {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  let waiting = 0;
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[1]?.endsWith(`:${hexPort}`) && fields[3] === "0A") waiting += parseInt(fields[4]!.split(":")[1]!, 16);
    }
  }
  return waiting;
}
