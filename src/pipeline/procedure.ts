import { create, type DescMethod, type DescMethodStreaming, type DescMethodUnary, type DescService, type Message, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { scopeOf } from "../auth/scopes.js";
import type { Principal } from "../domain/principal.js";
import type { RequestContext } from "../http/request-context.js";

/** CallerKey is the key a call was made with: what the key API needs to refuse an escalation. */
export type CallerKey = Pick<Principal, "keyId" | "scopes" | "allowedCidrs" | "expiresAt">;

/** ProcedureCall is what a procedure learns about its caller. */
export interface ProcedureCall {
  /** The caller's merchant: set for every procedure that requires an API key. */
  readonly merchantId: string;
  /** The key's mode (issue 23, §1): what the call creates carries it, and it sees only that mode's objects. */
  readonly livemode: boolean;
  /** The key the call was made with (keyId "" and no scopes for a procedure that needs none). */
  readonly key: CallerKey;
  readonly context: RequestContext;
  /** Aborted when the client goes away or its deadline passes (streams watch it). */
  readonly signal: AbortSignal;
}

/** The implementation of one unary RPC. */
export type UnaryImpl<M extends DescMethodUnary> = (
  input: MessageShape<M["input"]>,
  call: ProcedureCall,
) => Promise<MessageInitShape<M["output"]>> | MessageInitShape<M["output"]>;

/** The implementation of one streaming RPC (server, client or bidi). */
export type StreamImpl<M extends DescMethodStreaming> = (
  inputs: AsyncIterable<MessageShape<M["input"]>>,
  call: ProcedureCall,
) => AsyncIterable<MessageInitShape<M["output"]>>;

/** ServiceImpl maps each method's localName to its implementation. */
export type ServiceImpl<S extends DescService> = {
  [K in keyof S["method"]]: S["method"][K] extends DescMethodUnary
    ? UnaryImpl<S["method"][K]>
    : S["method"][K] extends DescMethodStreaming
      ? StreamImpl<S["method"][K]>
      : never;
};

/**
 * Procedure is one RPC as every protocol reaches it: REST through its
 * google.api.http route, Connect, gRPC-Web and gRPC by its path. The pipeline
 * runs it; the protocols only decode and encode.
 */
export interface Procedure {
  readonly service: DescService;
  readonly method: DescMethod;
  /** "/payments.v2.PaymentIntentService/CreatePaymentIntent": the RPC path and the route label. */
  readonly path: string;
  /** Whether callers must present an API key. Health and reflection do not. */
  readonly requiresKey: boolean;
  /** The scope a key needs (its proto option, auth/scopes.ts); undefined when it needs no key. */
  readonly scope?: string;
  /** Set for unary methods. */
  readonly unary?: (input: Message, call: ProcedureCall) => Promise<Message>;
  /** Set for streaming methods. */
  readonly stream?: (inputs: AsyncIterable<Message>, call: ProcedureCall) => AsyncIterable<Message>;
}

/** DefineOptions says which of a service's methods need an API key. */
export interface DefineOptions<S extends DescService> {
  /**
   * true or false for every method, or { except: [...] }: every method but
   * those listed (by localName) needs a key, as for the test helpers, whose
   * CreateMerchant is how a suite gets its first key.
   */
  requiresKey: boolean | { except: readonly (keyof S["method"] & string)[] };
}

/**
 * defineProcedures type-checks a service's implementation against its
 * descriptor and turns each method into a Procedure. Outputs may be message
 * init shapes; they become messages here (create() returns a message as is).
 */
export function defineProcedures<S extends DescService>(service: S, impl: ServiceImpl<S>, options: DefineOptions<S>): Procedure[] {
  const { requiresKey: rule } = options;
  const keyless = new Set<string>(typeof rule === "boolean" ? [] : rule.except);
  return service.methods.map((method) => {
    const fn = (impl as Record<string, unknown>)[method.localName];
    if (typeof fn !== "function") throw new Error(`${service.typeName}.${method.name} has no implementation`);
    const path = `/${service.typeName}/${method.name}`;
    const requiresKey = typeof rule === "boolean" ? rule : !keyless.has(method.localName);
    const scope = scopeOf(method);
    if (requiresKey && !scope) throw new Error(`${service.typeName}.${method.name} needs a key but declares no (payments.access.v1.scope)`);
    if (method.methodKind === "unary") {
      const call = fn as (input: Message, call: ProcedureCall) => unknown;
      return {
        service,
        method,
        path,
        requiresKey,
        scope,
        unary: async (input, procedureCall) => create(method.output, (await call(input, procedureCall)) as never) as Message,
      };
    }
    const stream = fn as (inputs: AsyncIterable<Message>, call: ProcedureCall) => AsyncIterable<unknown>;
    return {
      service,
      method,
      path,
      requiresKey,
      scope,
      async *stream(inputs, procedureCall) {
        for await (const output of stream(inputs, procedureCall)) yield create(method.output, output as never) as Message;
      },
    };
  });
}
