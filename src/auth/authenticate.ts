import { Code, ConnectError } from "@connectrpc/connect";
import type { Principal } from "../domain/principal.js";
import type { ApiKeyVerifier } from "./api-key-verifier.js";
import { failsChecksum } from "./api-key-format.js";

/** bearerKeyOf is the API key of an "Authorization: Bearer <api key>" header, or undefined. */
export function bearerKeyOf(authorization: string | null | undefined): string | undefined {
  const match = authorization ? /^Bearer +(.+)$/i.exec(authorization) : null;
  const key = match?.[1]?.trim();
  return key === "" ? undefined : key;
}

/**
 * authenticate reads "Authorization: Bearer <api key>" (§5) and returns the
 * key's merchant. Missing, malformed, empty and unknown keys all fail with
 * Unauthenticated; the message says which, without echoing the key.
 */
export async function authenticate(authorization: string | null | undefined, verifier: ApiKeyVerifier): Promise<Principal> {
  if (authorization === undefined || authorization === null || authorization === "") {
    throw new ConnectError("missing Authorization header: send 'Authorization: Bearer <api key>'", Code.Unauthenticated);
  }
  // The scheme name is case-insensitive (RFC 9110 §11.1).
  const match = /^Bearer(?: +(.*))?$/i.exec(authorization);
  if (!match) {
    throw new ConnectError("Authorization header must use the Bearer scheme: 'Bearer <api key>'", Code.Unauthenticated);
  }
  const key = (match[1] ?? "").trim();
  if (key === "") throw new ConnectError("API key is empty", Code.Unauthenticated);
  // A key of the current format whose checksum fails is a typo or a truncated
  // paste: refused without a lookup (unless a configured key happens to have
  // that shape: the verifier holds it in memory).
  if (failsChecksum(key) && !verifier.knows?.(key)) {
    throw new ConnectError("API key is not valid: its checksum does not match (mistyped or truncated?)", Code.Unauthenticated);
  }
  const principal = key.length <= 512 ? await verifier.verify(key) : undefined;
  if (!principal) {
    throw new ConnectError("API key is not valid", Code.Unauthenticated);
  }
  return principal;
}
