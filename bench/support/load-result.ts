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
  /** Answers that were not 2xx/3xx (for gRPC: grpc-status other than 0). */
  non2xx: number;
}

/** percentile of sorted values (nearest rank); NaN for none. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** summarize turns per-request latencies (ms) into a LoadResult. */
export function summarize(latenciesMs: number[], seconds: number, errors: number, non2xx: number): LoadResult {
  const sorted = Float64Array.from(latenciesMs).sort();
  return {
    requests: latenciesMs.length,
    seconds,
    rps: latenciesMs.length / seconds,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.length > 0 ? sorted[sorted.length - 1]! : NaN,
    errors,
    non2xx,
  };
}
