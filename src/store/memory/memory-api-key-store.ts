import { timingSafeEqual } from "node:crypto";
import { modeOfKey } from "../../auth/api-key-format.js";
import { hashApiKey } from "../../auth/hash-api-key.js";
import { isKeyActive, type ApiKeyRecord, type NewApiKey } from "../../domain/api-key.js";
import type { Principal } from "../../domain/principal.js";
import type { Clock } from "../../lib/clock.js";
import type { ApiKeyStore } from "../api-key-store.js";
import type { EventType } from "../../domain/event.js";
import type { MemoryEventRecorder } from "./memory-event-recorder.js";

export interface MemoryApiKeyStoreOptions {
  clock: Clock;
  newKeyId(): string;
  /** Records api_key.* events with the key API's changes (the shared event tables); absent, none. */
  recorder?: MemoryEventRecorder;
}

/** MemoryApiKeyStore is the in-memory ApiKeyStore, which also takes keys synchronously (API_KEYS at start). */
export interface MemoryApiKeyStore extends ApiKeyStore {
  /** Adds a key; a key already held (by any merchant) is refused, so a key never changes owner. */
  add(entry: { merchantId: string; merchantName: string; key: string }): ApiKeyRecord;
}

interface Held {
  hash: Buffer;
  record: ApiKeyRecord;
}

const copy = (record: ApiKeyRecord): ApiKeyRecord => ({ ...record, scopes: [...record.scopes], allowedCidrs: [...record.allowedCidrs] });

/**
 * createMemoryApiKeyStore keeps SHA-256 hashes of keys, never the keys. The
 * presented key is hashed before any comparison, so the time a lookup takes
 * says nothing about how much of a real key was guessed; the final
 * comparison is constant-time as well. It behaves as the PostgreSQL store
 * does (test/store/api-key-store-contract.ts).
 */
export function createMemoryApiKeyStore(options: MemoryApiKeyStoreOptions): MemoryApiKeyStore {
  const byHash = new Map<string, Held>();
  const byId = new Map<string, Held>();
  const merchantNames = new Map<string, string>();
  const now = () => options.clock.now();

  function store(merchantId: string, key: string, fields: Partial<ApiKeyRecord>): ApiKeyRecord {
    const hash = hashApiKey(key);
    const keyHash = hash.toString("hex");
    const held = byHash.get(keyHash);
    if (held) {
      if (held.record.merchantId !== merchantId) throw new Error("this API key already belongs to another merchant");
      return copy(held.record);
    }
    if (!merchantNames.has(merchantId)) merchantNames.set(merchantId, merchantId);
    const record: ApiKeyRecord = {
      id: options.newKeyId(),
      merchantId,
      mode: modeOfKey(key),
      name: "",
      scopes: [],
      allowedCidrs: [],
      keyPrefix: key.slice(0, 12),
      last4: key.slice(-4),
      createdAt: now(),
      lastUsedAt: null,
      expiresAt: null,
      revokedAt: null,
      ...fields,
    };
    const entry = { hash, record };
    byHash.set(keyHash, entry);
    byId.set(record.id, entry);
    return copy(record);
  }

  function principalOf(held: Held | undefined, hash: Buffer): Principal | undefined {
    if (!held || !timingSafeEqual(held.hash, hash) || !isKeyActive(held.record, now())) return undefined;
    const { record } = held;
    return {
      merchantId: record.merchantId,
      merchantName: merchantNames.get(record.merchantId) ?? record.merchantId,
      livemode: record.mode === "live",
      keyId: record.id,
      scopes: [...record.scopes],
      allowedCidrs: [...record.allowedCidrs],
      expiresAt: record.expiresAt,
    };
  }

  const merchantKey = (merchantId: string, id: string) => {
    const held = byId.get(id);
    return held && held.record.merchantId === merchantId && !held.record.revokedAt ? held : undefined;
  };

  /** Records the key's event in the same synchronous step as its change (memory's transaction), then announces it. */
  function recorded(type: EventType, record: ApiKeyRecord): ApiKeyRecord {
    const event = options.recorder?.recordKey(type, copy(record), now());
    if (event) options.recorder!.committed([event]);
    return copy(record);
  }

  function verifySync(key: string): Principal | undefined {
    const hash = hashApiKey(key);
    return principalOf(byHash.get(hash.toString("hex")), hash);
  }

  return {
    add(entry) {
      if (byHash.has(hashApiKey(entry.key).toString("hex"))) throw new Error("this API key is already held");
      merchantNames.set(entry.merchantId, entry.merchantName);
      return store(entry.merchantId, entry.key, {});
    },
    // Every key is in memory: verifying one never waits on a store.
    knows: (key) => verifySync(key) !== undefined,
    verify: async (key) => verifySync(key),
    async ensureMerchant(merchantId, name) {
      if (!merchantNames.has(merchantId)) merchantNames.set(merchantId, name);
    },
    async addKey(merchantId, key) {
      return store(merchantId, key, {});
    },
    async listKeys() {
      return [...byId.values()].map((held) => copy(held.record));
    },
    async revokeKey(id) {
      const held = byId.get(id);
      if (!held || held.record.revokedAt) return false;
      held.record.revokedAt = now();
      return true;
    },
    async countActiveKeys() {
      return [...byId.values()].filter((held) => !held.record.revokedAt).length;
    },
    async createKey(key: NewApiKey) {
      const { merchantId, key: secret, ...fields } = key;
      return recorded("api_key.created", store(merchantId, secret, { ...fields, scopes: [...fields.scopes], allowedCidrs: [...fields.allowedCidrs] }));
    },
    async listMerchantKeys(merchantId, modes) {
      return [...byId.values()]
        .filter(({ record }) => record.merchantId === merchantId && !record.revokedAt && modes.includes(record.mode))
        .map((held) => copy(held.record));
    },
    async findKey(merchantId, id) {
      const held = merchantKey(merchantId, id);
      return held && copy(held.record);
    },
    async rollKey(merchantId, id, newKey, endsAt) {
      const held = merchantKey(merchantId, id);
      if (!held || !isKeyActive(held.record, now())) return undefined;
      const { mode, name, scopes, allowedCidrs, expiresAt } = held.record;
      const created = store(merchantId, newKey, { mode, name, scopes: [...scopes], allowedCidrs: [...allowedCidrs], expiresAt });
      if (expiresAt === null || endsAt < expiresAt) held.record.expiresAt = endsAt;
      return { old: recorded("api_key.rolled", held.record), created };
    },
    async revokeMerchantKey(merchantId, id) {
      const held = merchantKey(merchantId, id);
      if (!held) return undefined;
      held.record.revokedAt = now();
      return recorded("api_key.revoked", held.record);
    },
    async markUsed(merchantId, id, at) {
      const held = merchantKey(merchantId, id);
      if (held && (held.record.lastUsedAt === null || held.record.lastUsedAt < at)) held.record.lastUsedAt = at;
    },
  };
}
