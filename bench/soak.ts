import type { BenchProcess } from "./support/bench-process.js";
import type { LoadResult } from "./support/load-result.js";

export interface SoakResult {
  seconds: number;
  /** Load before the soak began, so the heap has settled. */
  warmupSeconds: number;
  load: LoadResult;
  /** RSS when the soak began (after the warm-up), in bytes. */
  startRss: number;
  /** RSS at the end of the soak. */
  endRss: number;
  /** Highest RSS sampled during the soak. */
  maxRss: number;
  /** RSS sampled once a second. */
  samples: number[];
}

/**
 * runSoak samples the server's RSS once a second while drive() loads it, and
 * reports start, end and peak: a server that keeps no state per request must
 * stay flat.
 */
export async function runSoak(
  server: BenchProcess,
  seconds: number,
  warmupSeconds: number,
  drive: () => Promise<LoadResult>,
): Promise<SoakResult> {
  const samples = [server.rss()];
  const timer = setInterval(() => samples.push(server.rss()), 1000);
  let load: LoadResult;
  try {
    load = await drive();
  } finally {
    clearInterval(timer);
  }
  samples.push(server.rss());
  return {
    seconds,
    warmupSeconds,
    load,
    startRss: samples[0]!,
    endRss: samples[samples.length - 1]!,
    maxRss: Math.max(...samples),
    samples,
  };
}
