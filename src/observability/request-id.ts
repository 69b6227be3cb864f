import { randomUUID } from "node:crypto";

/** The header a request id arrives in and is echoed in, on every protocol. */
export const requestIdHeader = "x-request-id";

/**
 * A client's request id is kept only when it is short and plain: it goes into
 * log lines and response headers, so anything that could forge a log field,
 * split a header or bloat every line is replaced.
 */
const saneRequestId = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * chooseRequestId keeps the caller's X-Request-Id (so a trace spans the
 * caller, load balancer and this service) when it is sane, else makes a new
 * one. A header sent twice counts as absent: which one would be "the" id?
 */
export function chooseRequestId(
  header: string | string[] | undefined,
  generate: () => string = randomUUID,
): string {
  return typeof header === "string" && saneRequestId.test(header) ? header : generate();
}
