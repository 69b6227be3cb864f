/** LoadResult is what one measured run of a load generator reports. */
export interface LoadResult {
  /** Requests completed (any status). */
  requests: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Socket errors and timeouts: requests that got no answer. */
  errors: number;
  /**
   * Answers by outcome: the HTTP status ("201"), "grpc-status 0" for gRPC,
   * "ok" / "error" for the plain-pg baselines. The bench fails a phase with
   * any outcome other than the scenario's expected one.
   */
  outcomes: Record<string, number>;
  /** CPU the load generator itself used in the phase, in seconds, when known. */
  generatorCpuSeconds?: number;
}

/** percentile of sorted values (nearest rank); NaN for none. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** summarize turns per-request latencies (ms) into a LoadResult. */
export function summarize(latenciesMs: number[], seconds: number, errors: number, outcomes: Record<string, number>): LoadResult {
  const sorted = Float64Array.from(latenciesMs).sort();
  return {
    requests: latenciesMs.length,
    seconds,
    rps: latenciesMs.length / seconds,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.length > 0 ? sorted[sorted.length - 1]! : NaN,
    errors,
    outcomes,
  };
}

/**
 * unexpectedOutcomes describes every answer that was not the expected one
 * ("3 × 500, 12 socket errors"), or returns undefined when all were: a
 * scenario that answers errors fast must fail, not report a great figure.
 * A measured phase must also have answered at all; a short warm-up
 * (strict: false) may end before its first slow answer.
 */
export function unexpectedOutcomes(result: LoadResult, expected: string, strict = true): string | undefined {
  const parts = Object.entries(result.outcomes)
    .filter(([outcome, count]) => outcome !== expected && count > 0)
    .map(([outcome, count]) => `${count} × ${outcome}`);
  if (strict && result.errors > 0) parts.push(`${result.errors} socket errors or timeouts`);
  if (strict && (result.outcomes[expected] ?? 0) === 0) parts.push(`no ${expected} at all`);
  return parts.length === 0 ? undefined : parts.join(", ");
}
