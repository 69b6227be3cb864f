import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import type {
  ApiKeyWithSecretSchema,
  CreateApiKeyRequest,
  ListApiKeysResponseSchema,
  RevokeApiKeyResponseSchema,
  RollApiKeyRequest,
} from "../../gen/payments/v2/api_keys_pb.js";
import { newApiKey, type ApiKeyMode } from "../auth/api-key-format.js";
import { networksWithin, parseCidr } from "../auth/client-networks.js";
import { holdsScope } from "../auth/scopes.js";
import { isKeyActive, type ApiKeyRecord } from "../domain/api-key.js";
import type { Clock } from "../lib/clock.js";
import type { CallerKey } from "../pipeline/procedure.js";
import { invalid } from "../rules/invalid.js";
import type { ApiKeyStore } from "../store/api-key-store.js";
import { apiKeyMessage, apiKeyWithSecret } from "./api-key-presenter.js";
import { inOtherMode, modeName } from "./mode-scope.js";

/** KeyCaller is who manages keys: the calling key's merchant, mode and own limits. */
export interface KeyCaller {
  merchantId: string;
  livemode: boolean;
  key: CallerKey;
}

export interface ApiKeyServiceOptions {
  keys: ApiKeyStore;
  clock: Clock;
  /** Every scope a key may be given: those the served methods declare (auth/scopes.ts, scopesOf). */
  scopes: readonly string[];
  /** Makes a key's secret; default the current format's (auth/api-key-format.ts). */
  newKey?: (mode: ApiKeyMode) => string;
}

type WithSecret = MessageInitShape<typeof ApiKeyWithSecretSchema>;

/** ApiKeyService is the rules of the key API (issue 23, §2); the store keeps the keys. */
export interface ApiKeyService {
  create(caller: KeyCaller, request: CreateApiKeyRequest): Promise<WithSecret>;
  list(caller: KeyCaller): Promise<MessageInitShape<typeof ListApiKeysResponseSchema>>;
  roll(caller: KeyCaller, request: RollApiKeyRequest): Promise<WithSecret>;
  revoke(caller: KeyCaller, id: string): Promise<MessageInitShape<typeof RevokeApiKeyResponseSchema>>;
}

/**
 * The modes a key manages (README, Behaviour): a live key both, a test key
 * only test keys, so a test key (the one in CI logs and laptops) can never
 * reach a live key, while a live key can provision a test key for CI.
 */
const managedModes = (livemode: boolean): ApiKeyMode[] => (livemode ? ["test", "live"] : ["test"]);

/**
 * refuseEscalation is the 403 when a key would make (or roll into) a key
 * that may do more than itself: every scope of the new key must be one the
 * caller holds, only a key with every scope makes a key with every scope, a
 * key that expires makes no key that outlives it, and a key held to
 * networks makes only keys held inside them (else a machine inside the
 * office network could mint a key that works from anywhere and carry it out).
 */
function refuseEscalation(caller: CallerKey, wanted: readonly string[], expiresAt: Date | null, networks: readonly string[]): void {
  if (!networksWithin(networks, caller.allowedCidrs)) {
    throw new ConnectError(
      `this API key is held to ${caller.allowedCidrs.join(", ")}: it can only make keys held to networks inside those (give allowedCidrs within them)`,
      Code.PermissionDenied,
    );
  }
  if (caller.expiresAt && (expiresAt === null || expiresAt.getTime() > caller.expiresAt.getTime())) {
    throw new ConnectError(
      `this API key expires at ${caller.expiresAt.toISOString()}: it cannot make a key that outlives it (give an expiresAt no later)`,
      Code.PermissionDenied,
    );
  }
  if (caller.scopes.length === 0) return;
  if (wanted.length === 0) {
    throw new ConnectError("this API key cannot make a key with every scope: it holds only " + caller.scopes.join(", "), Code.PermissionDenied);
  }
  const beyond = wanted.find((scope) => !holdsScope(caller.scopes, scope));
  if (beyond) throw new ConnectError(`this API key cannot grant the scope ${beyond}: it does not hold it`, Code.PermissionDenied);
}

/** createApiKeyService builds the key API's rules over a key store. */
export function createApiKeyService(options: ApiKeyServiceOptions): ApiKeyService {
  const { keys, clock } = options;
  const known = new Set(options.scopes);
  const makeKey = options.newKey ?? ((mode: ApiKeyMode) => newApiKey(mode));

  /** The caller's key of that id in a mode it manages; 404 otherwise (saying so when it is in the other mode). */
  async function managed(caller: KeyCaller, id: string): Promise<ApiKeyRecord> {
    const record = id === "" ? undefined : await keys.findKey(caller.merchantId, id);
    if (!record) throw new ConnectError(`API key ${id} not found`, Code.NotFound);
    if (!managedModes(caller.livemode).includes(record.mode)) throw inOtherMode("API key", id, caller.livemode);
    return record;
  }

  return {
    async create(caller, request) {
      const mode = (request.mode || modeName(caller.livemode)) as ApiKeyMode;
      if (!managedModes(caller.livemode).includes(mode)) {
        throw new ConnectError("a test mode key cannot make live mode keys: use a live key", Code.PermissionDenied);
      }
      request.scopes.forEach((scope, i) => {
        if (!known.has(scope)) throw invalid(`scopes[${i}]: "${scope}" is not a scope; the scopes are ${[...known].join(", ")}`);
      });
      request.allowedCidrs.forEach((cidr, i) => {
        if (!parseCidr(cidr)) throw invalid(`allowedCidrs[${i}] must be an IPv4 or IPv6 network in CIDR notation, e.g. 203.0.113.0/24`);
      });
      const expiresAt = request.expiresAt ? timestampDate(request.expiresAt) : null;
      if (expiresAt && expiresAt.getTime() <= clock.now().getTime()) throw invalid("expiresAt must be in the future");
      refuseEscalation(caller.key, request.scopes, expiresAt, request.allowedCidrs);
      const secret = makeKey(mode);
      const record = await keys.createKey({
        merchantId: caller.merchantId,
        key: secret,
        mode,
        name: request.name,
        scopes: request.scopes,
        allowedCidrs: request.allowedCidrs,
        expiresAt,
      });
      return apiKeyWithSecret(record, secret);
    },

    async list(caller) {
      const records = await keys.listMerchantKeys(caller.merchantId, managedModes(caller.livemode));
      return { apiKeys: records.map(apiKeyMessage) };
    },

    async roll(caller, request) {
      const old = await managed(caller, request.id);
      if (!isKeyActive(old, clock.now())) {
        throw new ConnectError(`API key ${old.id} has expired: it cannot be rolled; make a new key`, Code.FailedPrecondition);
      }
      refuseEscalation(caller.key, old.scopes, old.expiresAt, old.allowedCidrs);
      const secret = makeKey(old.mode);
      const endsAt = new Date(clock.now().getTime() + (request.graceSeconds ?? 0) * 1000);
      const rolled = await keys.rollKey(caller.merchantId, old.id, secret, endsAt);
      // Revoked or expired between the read and the roll.
      if (!rolled) throw new ConnectError(`API key ${old.id} not found`, Code.NotFound);
      return apiKeyWithSecret(rolled.created, secret);
    },

    async revoke(caller, id) {
      await managed(caller, id);
      const revoked = await keys.revokeMerchantKey(caller.merchantId, id);
      if (!revoked) throw new ConnectError(`API key ${id} not found`, Code.NotFound);
      return { status: 200, title: "OK", message: `API key ${id} revoked` };
    },
  };
}
