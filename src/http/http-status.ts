import { STATUS_CODES } from "node:http";
import { Code } from "@connectrpc/connect";

/**
 * The one table from RPC code to HTTP status, for REST responses. It follows
 * google.rpc.Code's HTTP mapping as Vanguard applies it (protocol_http.go),
 * with every conflict code on 409; anything not listed is a server fault.
 */
const statusByCode: Partial<Record<Code, number>> = {
  [Code.InvalidArgument]: 400,
  [Code.Unauthenticated]: 401,
  [Code.PermissionDenied]: 403,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.Aborted]: 409,
  [Code.FailedPrecondition]: 409,
  [Code.ResourceExhausted]: 429,
  [Code.Unimplemented]: 501,
  [Code.Unavailable]: 503,
  [Code.DeadlineExceeded]: 504,
};

/** httpStatusOf maps an RPC code to the HTTP status the REST API answers with. */
export function httpStatusOf(code: Code): number {
  return statusByCode[code] ?? 500;
}

/** reasonPhrase is the standard HTTP reason phrase, used as the error title (§7). */
export function reasonPhrase(status: number): string {
  return STATUS_CODES[status] ?? "Error";
}

/** ErrorBody is the §7 error reply. */
export interface ErrorBody {
  status: number;
  title: string;
  message: string;
}

/** errorBody builds {status, title, message} with status equal to the HTTP code. */
export function errorBody(status: number, message: string): ErrorBody {
  return { status, title: reasonPhrase(status), message };
}
