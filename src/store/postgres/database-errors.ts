import { Code, ConnectError } from "@connectrpc/connect";
import { ConnectionException, LockWaitTimeoutException } from "@mikro-orm/core";

// SQLSTATE classes and codes that mean "the database cannot serve this now",
// not "the request was wrong": connection exceptions (08), insufficient
// resources (53), operator intervention such as admin shutdown (57P01) and
// statement timeout (57014), and serialization failures (40001, 40P01).
const unavailableStates = /^(08|53|57P0|57014|40001|40P01)/;
const unavailableMessages =
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|Connection terminated|timeout exceeded when trying to connect|Query read timeout|connection timeout|the database system is (starting up|shutting down)|Client (has encountered a connection error|was closed) and is not queryable/i;

/** isDatabaseUnavailable tells a transient database failure from a bug. */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof ConnectionException || error instanceof LockWaitTimeoutException) return true;
  let current: unknown = error;
  for (let depth = 0; current && depth < 4; depth++) {
    const { code, sqlState, message } = current as { code?: unknown; sqlState?: unknown; message?: unknown };
    if (typeof sqlState === "string" && unavailableStates.test(sqlState)) return true;
    if (typeof code === "string" && (unavailableStates.test(code) || unavailableMessages.test(code))) return true;
    if (typeof message === "string" && unavailableMessages.test(message)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * withDatabaseErrors runs a store operation and turns a transient database
 * failure into Unavailable (503 over REST), which clients may retry; anything
 * else propagates unchanged and ends as an internal error.
 */
export async function withDatabaseErrors<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (isDatabaseUnavailable(error)) {
      throw new ConnectError("the database is unavailable; retry later", Code.Unavailable, undefined, undefined, error);
    }
    throw error;
  }
}
