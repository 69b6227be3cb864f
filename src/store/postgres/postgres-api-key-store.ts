import { timingSafeEqual } from "node:crypto";
import { UniqueConstraintViolationException } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
import { hashApiKey } from "../../auth/hash-api-key.js";
import type { Principal } from "../../domain/principal.js";
import type { Clock } from "../../lib/clock.js";
import type { ApiKeyRecord, ApiKeyStore } from "../api-key-store.js";
import { withDatabaseErrors } from "./database-errors.js";
import { ApiKeyEntity, type ApiKeyRow } from "./entities/api-key-entity.js";
import { MerchantEntity } from "./entities/merchant-entity.js";

export interface PostgresApiKeyStoreOptions {
  clock: Clock;
  newKeyId(): string;
  /**
   * How long a verified key is trusted without asking the database again.
   * Keeps authentication off the hot path; a revoked key stops working within
   * this time on every instance.
   */
  cacheTtlMs: number;
}

function toRecord(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    merchantId: row.merchantId,
    keyPrefix: row.keyPrefix,
    createdAt: new Date(row.createdAt),
    revokedAt: row.revokedAt ? new Date(row.revokedAt) : null,
  };
}

/** createPostgresApiKeyStore keeps merchants and key hashes in PostgreSQL. */
export function createPostgresApiKeyStore(root: EntityManager, options: PostgresApiKeyStoreOptions): ApiKeyStore {
  const fork = () => root.fork({ clear: true });
  const cache = new Map<string, { principal: Principal; until: number }>();

  async function ensureMerchant(em: EntityManager, merchantId: string, name: string): Promise<void> {
    await em
      .createQueryBuilder(MerchantEntity)
      .insert({ id: merchantId, name, createdAt: options.clock.now() })
      .onConflict("id")
      .ignore()
      .execute();
  }

  return {
    verify: (key) =>
      withDatabaseErrors(async () => {
        const hash = hashApiKey(key).toString("hex");
        const now = options.clock.now().getTime();
        const cached = cache.get(hash);
        if (cached && cached.until > now) return { ...cached.principal };
        cache.delete(hash);
        const em = fork();
        const row = await em.findOne(ApiKeyEntity, { keyHash: hash, revokedAt: null });
        // The lookup is by hash, so its timing says nothing about the key;
        // compare once more in constant time all the same.
        if (!row || !timingSafeEqual(Buffer.from(row.keyHash), Buffer.from(hash))) return undefined;
        const merchant = await em.findOne(MerchantEntity, { id: row.merchantId });
        if (!merchant) return undefined;
        const principal = { merchantId: merchant.id, merchantName: merchant.name };
        if (cache.size > 10_000) cache.clear();
        cache.set(hash, { principal, until: now + options.cacheTtlMs });
        return { ...principal };
      }),

    ensureMerchant: (merchantId, name) => withDatabaseErrors(() => ensureMerchant(fork(), merchantId, name)),

    addKey: (merchantId, key) =>
      withDatabaseErrors(async () => {
        const em = fork();
        const hash = hashApiKey(key).toString("hex");
        await ensureMerchant(em, merchantId, merchantId);
        const existing = await em.findOne(ApiKeyEntity, { keyHash: hash });
        if (existing) {
          if (existing.merchantId !== merchantId) throw new Error("this API key already belongs to another merchant");
          return toRecord(existing);
        }
        const row = {
          id: options.newKeyId(),
          merchantId,
          keyHash: hash,
          keyPrefix: key.slice(0, 12),
          createdAt: options.clock.now(),
          revokedAt: null,
        };
        try {
          await em.insert(ApiKeyEntity, row);
        } catch (error) {
          // Another instance stored the same key at the same moment.
          if (!(error instanceof UniqueConstraintViolationException)) throw error;
          const raced = await fork().findOne(ApiKeyEntity, { keyHash: hash });
          if (!raced || raced.merchantId !== merchantId) throw error;
          return toRecord(raced);
        }
        return toRecord(row as ApiKeyRow);
      }),

    listKeys: () =>
      withDatabaseErrors(async () =>
        (await fork().find(ApiKeyEntity, {}, { orderBy: [{ merchantId: "asc" }, { createdAt: "asc" }] })).map(toRecord),
      ),

    revokeKey: (id) =>
      withDatabaseErrors(async () => {
        const changed = await fork().nativeUpdate(ApiKeyEntity, { id, revokedAt: null }, { revokedAt: options.clock.now() });
        cache.clear();
        return changed === 1;
      }),

    countActiveKeys: () => withDatabaseErrors(() => fork().count(ApiKeyEntity, { revokedAt: null })),
  };
}
