import { Code, ConnectError, createContextKey, type HandlerContext } from "@connectrpc/connect";
import type { Principal } from "../domain/principal.js";

/** kPrincipal carries the authenticated merchant from the transport to the handlers. */
export const kPrincipal = createContextKey<Principal | undefined>(undefined, { description: "principal" });

/**
 * requirePrincipal reads the caller. Every transport authenticates before a
 * handler runs, so a missing principal is refused rather than trusted.
 */
export function requirePrincipal(context: HandlerContext): Principal {
  const principal = context.values.get(kPrincipal);
  if (!principal) throw new ConnectError("not authenticated", Code.Unauthenticated);
  return principal;
}
