const dayMs = 86_400_000;
const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/**
 * createIsoTime makes a formatter of epoch milliseconds as RFC 3339 in UTC
 * with exactly three fractional digits, the form every time in a response and
 * a log line takes ("2026-11-21T14:30:11.579Z"). Date.prototype.toISOString
 * costs about as much as parsing a request body; this keeps the date part of
 * the last day seen and formats the time of day by arithmetic, and remembers
 * the last value (a response's createdAt and updatedAt are often equal).
 */
export function createIsoTime(): (ms: number) => string {
  let day = Number.NaN;
  let dayPrefix = "";
  let lastMs = Number.NaN;
  let last = "";
  return (ms) => {
    if (ms === lastMs) return last;
    const start = Math.floor(ms / dayMs) * dayMs;
    // Years outside 0000–9999 have another form; let Date write those.
    if (start !== day) {
      if (ms < -62_167_219_200_000 || ms >= 253_402_300_800_000) return new Date(ms).toISOString();
      day = start;
      dayPrefix = new Date(start).toISOString().slice(0, 11);
    }
    let rest = ms - start;
    const milli = rest % 1000;
    rest = (rest - milli) / 1000;
    const second = rest % 60;
    rest = (rest - second) / 60;
    const minute = rest % 60;
    const hour = (rest - minute) / 60;
    lastMs = ms;
    last = `${dayPrefix}${pad2(hour)}:${pad2(minute)}:${pad2(second)}.${pad3(milli)}Z`;
    return last;
  };
}
