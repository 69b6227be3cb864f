/**
 * parseRetryAfter reads a Retry-After header (RFC 9110 §10.2.3): a number of
 * seconds, or an HTTP-date, which is read against now (the real time: the
 * receiver's date is in its own wall clock, not the service's injected one).
 * The answer is a delay in milliseconds, never negative; null when the header
 * is missing or unreadable, so the schedule alone decides.
 */
export function parseRetryAfter(value: string | undefined, now: Date): number | null {
  const text = value?.trim();
  if (text === undefined || text === "") return null;
  // Digits only: seconds. A huge number is clamped rather than overflowing; the policy caps it anyway.
  if (/^\d+$/.test(text)) return Math.min(Number(text.slice(0, 10)), 9_999_999_999) * 1000;
  // HTTP-date in any of the three forms RFC 9110 §5.6.7 asks recipients to accept; all name GMT or are asctime.
  if (!/GMT$|^\w{3} \w{3} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/.test(text)) return null;
  const at = Date.parse(/GMT$/.test(text) ? text : `${text} GMT`);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now.getTime());
}
