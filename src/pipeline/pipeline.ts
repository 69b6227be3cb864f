import type { Message } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { keyRecheckIntervalMs, type ApiKeyVerifier } from "../auth/api-key-verifier.js";
import { authenticate, bearerKeyOf } from "../auth/authenticate.js";
import { createClientNetworksCache } from "../auth/client-networks.js";
import { hashApiKey } from "../auth/hash-api-key.js";
import { holdsScope, missingScope } from "../auth/scopes.js";
import { createConcurrencyGate } from "../limits/concurrency-gate.js";
import type { FailedAuthThrottle } from "../limits/failed-auth-throttle.js";
import type { RateDecision, RateLimit, RateLimiter } from "../limits/rate-limiter.js";
import { HttpRefusal } from "../http/http-refusal.js";
import { BodyTooLarge, ClientGone } from "../http/read-body.js";
import type { Logger } from "../lib/logger.js";
import { createContractChecker } from "../rules/contract-rules.js";
import type { RequestChecker } from "../rules/request-checker.js";
import type { CallerKey, Procedure, ProcedureCall } from "./procedure.js";
import { isProtocolViolation } from "./protocol-violation.js";
import type { RequestContext } from "../http/request-context.js";

/** How a protocol hands one call to the pipeline. */
export interface PipelineCall {
  /** Every Authorization header value the request carried (a repeated header is refused). */
  authorization: readonly string[];
  /**
   * REST checks the key before it reads the body (the contract's order:
   * route, key, media type, size, body); the RPC protocols decode the message
   * first, as their framing requires.
   */
  keyFirst: boolean;
}

export interface PipelineOptions {
  verifier: ApiKeyVerifier;
  logger: Logger;
  /** The per-API-key limit (RATE_LIMIT_RPS, RATE_LIMIT_BURST); absent, keys are not limited. */
  keyLimit?: { limiter: RateLimiter; limit: RateLimit };
  /** Failed authentications per client address (AUTH_FAILURES_PER_MINUTE); absent, not throttled. */
  failedAuth?: FailedAuthThrottle;
  /** The field rules every input passes before its procedure; by default the proto's (src/rules). */
  checker?: RequestChecker;
  /** How often an open stream re-checks its key (default keyRecheckIntervalMs, 10 s); shorter in tests. */
  keyRecheckMs?: number;
  /** Told of every call a key was let through for (its lastUsedAt, auth/key-usage.ts). */
  onKeyUsed?(merchantId: string, keyId: string): void;
}

/**
 * Pipeline is the one path every call takes, whatever protocol brought it:
 * authenticate (when the procedure needs a key) and rate-limit, check the
 * input against the proto's field rules (filling declared defaults), run the
 * procedure, and keep unexpected failures private.
 * The protocols only frame, decode and encode around it.
 */
export interface Pipeline {
  /**
   * Runs a unary procedure. Rejects only with a ConnectError, an HttpRefusal
   * (413/415 from reading the input) or ClientGone: anything else has been
   * logged and replaced by Internal "internal error".
   */
  unary(context: RequestContext, procedure: Procedure, call: PipelineCall, readInput: () => Promise<Message>): Promise<Message>;
  /**
   * Runs a streaming procedure. Errors raised before it streams and while it
   * streams (its own, a request message that fails the field rules) are
   * mapped the same way as unary ones (see failure()).
   */
  stream(
    context: RequestContext,
    procedure: Procedure,
    call: PipelineCall,
    inputs: AsyncIterable<Message>,
    signal: AbortSignal,
  ): Promise<AsyncIterable<Message>>;
  /** failure maps anything thrown while serving to what the client may see, logging the unexpected. */
  failure(context: RequestContext, error: unknown): unknown;
}

const neverAborted = new AbortController().signal;

/**
 * Store lookups at once, per instance, for keys presented from addresses
 * over their failed-auth budget: few enough that an attacker's made-up keys
 * take at most this many pooled connections, enough that a real key behind
 * the same address waits milliseconds, not seconds.
 */
const blockedLookupConcurrency = 2;

/** Caller is who a procedure runs for: the key's merchant and mode, and the key. */
interface Caller {
  merchantId: string;
  livemode: boolean;
  key: CallerKey;
}

/** A procedure that needs no key runs for no merchant. */
const noCaller: Caller = { merchantId: "", livemode: false, key: { keyId: "", scopes: [], allowedCidrs: [], expiresAt: null } };

/** createPipeline builds the pipeline over the key verifier (which carries the rate limit). */
export function createPipeline(options: PipelineOptions): Pipeline {
  const checker = options.checker ?? createContractChecker();

  const { verifier, keyLimit, failedAuth } = options;
  const blockedLookups = createConcurrencyGate(blockedLookupConcurrency);
  const networksOf = createClientNetworksCache();

  /**
   * principalOf authenticates the call and charges it to its key's rate
   * limit. An address over its failed-auth budget gets 429 for any key the
   * store does not know (a key outside the verifier's cache is looked up
   * through a narrow gate); a key the store does not know spends that budget.
   * An unknown key is never charged to a real key's bucket.
   */
  async function principalOf(context: RequestContext, procedure: Procedure, call: PipelineCall): Promise<Caller> {
    if (!procedure.requiresKey) return noCaller;
    if (call.authorization.length > 1) {
      throw new ConnectError("send the Authorization header once", Code.Unauthenticated);
    }
    const header = call.authorization[0];
    let principal;
    const blocked = failedAuth ? await failedAuth.check(context.clientAddress) : { allowed: true as const };
    if (!blocked.allowed) {
      const key = bearerKeyOf(header);
      if (key === undefined) throw limited(blocked, "too many failed authentications from this address");
      // A key the store knows is never refused for what others sent from the
      // same address (a balancer's, a shared NAT's): one not cached is looked
      // up, a few such lookups at a time for every blocked address together,
      // so a flood of made-up keys waits in line instead of filling the pool.
      if (key.length > 512) principal = undefined;
      else if (!verifier.knows?.(key)) principal = await blockedLookups.run(() => verifier.verify(key));
      else principal = await verifier.verify(key);
      if (!principal) throw limited(blocked, "too many failed authentications from this address");
    } else {
      try {
        principal = await authenticate(header, verifier);
      } catch (error) {
        if (failedAuth && error instanceof ConnectError && error.code === Code.Unauthenticated) {
          await failedAuth.recordFailure(context.clientAddress);
        }
        throw error;
      }
    }
    context.merchantId = principal.merchantId;
    if (keyLimit) {
      // Buckets are keyed by the key's hash: a shared limiter never holds a key.
      const decision = await keyLimit.limiter.consume(hashApiKey(bearerKeyOf(header)!).toString("hex"));
      if (!decision.allowed) {
        const { ratePerSecond, burst } = keyLimit.limit;
        throw limited(decision, `rate limit exceeded: at most ${ratePerSecond} requests per second per API key, bursts of ${burst}`);
      }
    }
    // The key's own limits (issue 23, §2), after the rate limit so a refused call still costs its bucket.
    if (!networksOf(principal.allowedCidrs).allows(context.clientAddress)) {
      throw new ConnectError("this API key is not accepted from this client's address (see its allowedCidrs)", Code.PermissionDenied);
    }
    if (procedure.scope && !holdsScope(principal.scopes, procedure.scope)) throw missingScope(procedure.scope);
    options.onKeyUsed?.(principal.merchantId, principal.keyId);
    const { keyId, scopes, allowedCidrs, expiresAt } = principal;
    return { merchantId: principal.merchantId, livemode: principal.livemode, key: { keyId, scopes, allowedCidrs, expiresAt } };
  }

  /**
   * whileKeyValid runs a stream that re-checks its key every keyRecheckMs
   * (issue 21, §3): once the key is revoked, the stream's signal aborts (the
   * procedure stops as if the client had left) and the stream ends with
   * Unauthenticated, the answer a new call with that key gets. A re-check
   * that fails (the store is down) keeps the stream: the next one decides.
   */
  async function* whileKeyValid(
    key: string,
    signal: AbortSignal,
    open: (stop: AbortSignal) => AsyncIterable<Message>,
  ): AsyncGenerator<Message> {
    const revoked = new AbortController();
    const recheck = verifier.recheck?.bind(verifier) ?? verifier.verify.bind(verifier);
    let checking = false;
    const timer = setInterval(() => {
      if (checking) return;
      checking = true;
      recheck(key)
        .then((principal) => {
          if (!principal) revoked.abort();
        })
        .catch(() => {})
        .finally(() => {
          checking = false;
        });
    }, options.keyRecheckMs ?? keyRecheckIntervalMs);
    timer.unref();
    try {
      yield* open(AbortSignal.any([signal, revoked.signal]));
      if (revoked.signal.aborted) throw new ConnectError("API key is not valid", Code.Unauthenticated);
    } finally {
      clearInterval(timer);
    }
  }

  function failure(context: RequestContext, error: unknown): unknown {
    if (error instanceof ConnectError && ((error.code !== Code.Internal && error.code !== Code.Unknown) || isProtocolViolation(error))) return error;
    if (error instanceof HttpRefusal || error instanceof BodyTooLarge || error instanceof ClientGone) return error;
    const rest = context.protocol === "rest";
    options.logger.error(
      {
        requestId: context.requestId,
        ...(context.merchantId !== undefined && { merchantId: context.merchantId }),
        [rest ? "route" : "procedure"]: context.route,
        err: describeError(error),
      },
      rest ? "unexpected error in REST request" : "unexpected error in RPC handler",
    );
    return new ConnectError("internal error", Code.Internal, undefined, undefined, error);
  }

  return {
    failure,

    async unary(context, procedure, call, readInput) {
      try {
        let caller = call.keyFirst ? await principalOf(context, procedure, call) : noCaller;
        const input = await readInput();
        if (!call.keyFirst) caller = await principalOf(context, procedure, call);
        checker.checkFor(procedure.method.input)(input);
        const procedureCall: ProcedureCall = { ...caller, context, signal: neverAborted };
        return await procedure.unary!(input, procedureCall);
      } catch (error) {
        throw failure(context, error);
      }
    },

    async stream(context, procedure, call, inputs, signal) {
      try {
        const caller = await principalOf(context, procedure, call);
        const check = checker.checkFor(procedure.method.input);
        const checked = (async function* () {
          for await (const input of inputs) {
            check(input);
            yield input;
          }
        })();
        const stream = procedure.requiresKey
          ? whileKeyValid(bearerKeyOf(call.authorization[0])!, signal, (stop) => procedure.stream!(checked, { ...caller, context, signal: stop }))
          : procedure.stream!(checked, { ...caller, context, signal });
        return mapFailures(stream, (error) => failure(context, error));
      } catch (error) {
        throw failure(context, error);
      }
    },
  };
}

/** mapFailures passes a stream's messages through and maps whatever it throws. */
async function* mapFailures<T>(source: AsyncIterable<T>, map: (error: unknown) => unknown): AsyncGenerator<T> {
  try {
    yield* source;
  } catch (error) {
    throw map(error);
  }
}

/** limited is ResourceExhausted (REST 429) with Retry-After in whole seconds, at least 1 (RFC 9110 §10.2.3). */
function limited(decision: RateDecision, reason: string): ConnectError {
  const seconds = decision.allowed ? 1 : Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  return new ConnectError(`${reason}; retry after ${seconds} s`, Code.ResourceExhausted, { "retry-after": String(seconds) });
}

function describeError(error: unknown): unknown {
  return error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : String(error);
}
