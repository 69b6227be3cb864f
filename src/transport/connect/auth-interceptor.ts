import type { Interceptor } from "@connectrpc/connect";
import type { ApiKeyVerifier } from "../../auth/api-key-verifier.js";
import { authenticate } from "../../auth/authenticate.js";
import { kPrincipal } from "../principal-context.js";

/**
 * createAuthInterceptor authenticates every RPC (gRPC, gRPC-Web, Connect) by
 * its bearer API key and hands the merchant to the handler through kPrincipal.
 */
export function createAuthInterceptor(verifier: ApiKeyVerifier): Interceptor {
  return (next) => async (request) => {
    const principal = await authenticate(request.header.get("authorization"), verifier);
    request.contextValues.set(kPrincipal, principal);
    return next(request);
  };
}
