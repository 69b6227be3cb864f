/** A figure over the rounds of a run: its median and its range. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

/** median of the values (the mean of the middle two for an even count); NaN for none. */
export function median(values: number[]): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** spread is the median, min and max of the finite values; NaN for none. */
export function spread(values: number[]): Spread {
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return { median: NaN, min: NaN, max: NaN };
  return { median: median(finite), min: Math.min(...finite), max: Math.max(...finite) };
}
