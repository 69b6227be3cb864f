import type { LoadResult } from "./support/load-result.js";
import type { Measurement } from "./support/measure.js";
import { median } from "./support/stats.js";

export interface SoakResult {
  seconds: number;
  /** Load before the soak began, so the heap has settled. */
  warmupSeconds: number;
  load: LoadResult;
  /** The server's CPU per request over the soak, µs. */
  cpuUsPerRequest: number;
  /** Its PostgreSQL backends' CPU per request over the soak, µs. */
  dbUsPerRequest?: number;
  /** RSS when the soak began (after the warm-up), in bytes. */
  startRss: number;
  /** RSS at the end of the soak. */
  endRss: number;
  /**
   * Median RSS of the first and of the last third of the samples: what the
   * flatness target compares, so one sample taken while V8 grows its heap
   * just before a major collection does not decide it.
   */
  firstThirdRss: number;
  lastThirdRss: number;
  /** Highest RSS sampled during the soak. */
  maxRss: number;
  /** RSS sampled once a second. */
  samples: number[];
}

/**
 * runSoak samples the server's RSS once a second while measure() loads it, and
 * reports start, end and peak: a server that keeps no state per request must
 * stay flat.
 */
export async function runSoak(
  server: { rss(): number },
  seconds: number,
  warmupSeconds: number,
  measure: () => Promise<Measurement>,
): Promise<SoakResult> {
  const samples = [server.rss()];
  const timer = setInterval(() => samples.push(server.rss()), 1000);
  let measurement: Measurement;
  try {
    measurement = await measure();
  } finally {
    clearInterval(timer);
  }
  samples.push(server.rss());
  return {
    seconds,
    warmupSeconds,
    load: measurement.result,
    cpuUsPerRequest: measurement.cpuUsPerRequest,
    dbUsPerRequest: measurement.dbUsPerRequest,
    startRss: samples[0]!,
    endRss: samples[samples.length - 1]!,
    maxRss: Math.max(...samples),
    firstThirdRss: median(samples.slice(0, Math.ceil(samples.length / 3))),
    lastThirdRss: median(samples.slice(-Math.ceil(samples.length / 3))),
    samples,
  };
}
