import { getOption, hasOption, type DescMethod, type DescService } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { scope } from "../../gen/payments/access/v1/access_pb.js";

/**
 * scopeOf is the scope a key needs to call the method: its
 * (payments.access.v1.scope) option, declared once beside the RPC in the
 * proto (issue 23, §2). undefined for a method that needs no key.
 */
export function scopeOf(method: DescMethod): string | undefined {
  return hasOption(method, scope) ? getOption(method, scope) : undefined;
}

/** scopesOf is every scope the services' methods declare, sorted: what a key may be given. */
export function scopesOf(services: readonly DescService[]): string[] {
  const all = new Set<string>();
  for (const service of services) {
    for (const method of service.methods) {
      const needed = scopeOf(method);
      if (needed) all.add(needed);
    }
  }
  return [...all].sort();
}

/**
 * holdsScope says whether a key with `held` scopes may do `needed`: a key
 * with none holds all of them, and `<resource>:write` holds
 * `<resource>:read` (what a merchant allowed to change a thing expects to be
 * allowed to see it, as Stripe's restricted keys do).
 */
export function holdsScope(held: readonly string[], needed: string): boolean {
  if (held.length === 0 || held.includes(needed)) return true;
  return needed.endsWith(":read") && held.includes(`${needed.slice(0, -":read".length)}:write`);
}

/** missingScope is the 403 for a call outside the key's scopes, naming the scope it lacks. */
export function missingScope(needed: string): ConnectError {
  return new ConnectError(`this API key lacks the scope ${needed}`, Code.PermissionDenied);
}
