/**
 * How the stores pass values to PostgreSQL and read them back. Every value is
 * a bind parameter in text format, and every column is read as the text the
 * server sent, parsed here: no global type parsers of node-postgres are
 * involved (each store call's rows are plain arrays of strings).
 */

/** A time as a parameter: ISO 8601 in UTC, which timestamptz reads the same whatever the session's TimeZone. */
export function timestampParam(value: Date): string {
  return value.toISOString();
}

export function nullableTimestampParam(value: Date | null): string | null {
  return value === null ? null : value.toISOString();
}

/**
 * A text[] parameter in PostgreSQL's array literal syntax, every element
 * quoted, so no value can change the array's shape (a comma, a brace, a
 * quote or a backslash inside an element stays inside it).
 */
export function textArrayParam(values: readonly string[]): string {
  let literal = "{";
  for (let i = 0; i < values.length; i++) {
    if (i > 0) literal += ",";
    literal += `"${values[i]!.replace(/[\\"]/g, "\\$&")}"`;
  }
  return `${literal}}`;
}

/** A bigint[] parameter: digits need no quoting. */
export function bigintArrayParam(values: readonly bigint[]): string {
  return `{${values.join(",")}}`;
}

/**
 * SQL reading a timestamptz column as milliseconds since the epoch (int8), so
 * the client parses a number instead of a date in the session's TimeZone.
 * Stored times come from JavaScript Dates, so they are whole milliseconds.
 */
export function epochMs(column: string): string {
  return `(extract(epoch from ${column}) * 1000)::int8`;
}

/** Reads an epochMs column. */
export function parseEpochMs(text: string): Date {
  return new Date(Number(text));
}

export function parseNullableEpochMs(text: string | null): Date | null {
  return text === null ? null : new Date(Number(text));
}

/**
 * Reads a text[] column whose elements are known to need no quoting (the
 * payment-method names a check constraint restricts to a-z 0-9 _): the
 * literal is then just "{a,b,c}".
 */
export function parsePlainTextArray(text: string): string[] {
  return text.length <= 2 ? [] : text.slice(1, -1).split(",");
}
