import { Code, ConnectError } from "@connectrpc/connect";

/**
 * invalid is the InvalidArgument every rule raises (REST 400). Its message
 * starts with the field's JSON path, so REST and RPC clients learn which
 * field to fix.
 */
export function invalid(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}
