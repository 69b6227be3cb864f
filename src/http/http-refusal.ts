/**
 * HttpRefusal is a transport-level refusal that has no RPC code: 405 (with
 * Allow), 413, 415. Over RPC the protocols answer these their own way; over
 * REST and plain routes they are written as {status, title, message}.
 */
export class HttpRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}
