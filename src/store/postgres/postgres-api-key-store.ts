import { timingSafeEqual } from "node:crypto";
import { hashApiKey } from "../../auth/hash-api-key.js";
import { modeOfKey } from "../../auth/api-key-format.js";
import type { Principal } from "../../domain/principal.js";
import type { Clock } from "../../lib/clock.js";
import type { ApiKeyRecord, ApiKeyStore } from "../api-key-store.js";
import { checkStorableText } from "../storable-text.js";
import { createBoundedTtlCache } from "./bounded-ttl-cache.js";
import type { Database } from "./database.js";
import { epochMs, parseEpochMs, parseNullableEpochMs, timestampParam } from "./sql-values.js";

export interface PostgresApiKeyStoreOptions {
  clock: Clock;
  newKeyId(): string;
  /**
   * How long a verified key is trusted without asking the database again.
   * Keeps authentication off the hot path; a revoked key stops working within
   * this time on every instance.
   */
  cacheTtlMs: number;
  /**
   * How long a key the database does not know is answered "unknown" without
   * asking again, so a flood of made-up keys costs no query each. A key
   * created on another instance works here within this time (at once when
   * created through this instance).
   */
  unknownTtlMs?: number;
  /** Most keys each cache holds; past it the oldest are forgotten. */
  cacheMaxEntries?: number;
}

const keyColumns = (t: string) =>
  `${t}.id, ${t}.merchant_id, ${t}.key_prefix, ${epochMs(`${t}.created_at`)}, ${epochMs(`${t}.revoked_at`)}`;

function readKey(row: readonly (string | null)[], start = 0): ApiKeyRecord {
  return {
    id: row[start]!,
    merchantId: row[start + 1]!,
    keyPrefix: row[start + 2]!,
    createdAt: parseEpochMs(row[start + 3]!),
    revokedAt: parseNullableEpochMs(row[start + 4] ?? null),
  };
}

const verifyText = `
  select k.key_hash, m.id, m.name from api_keys k join merchants m on m.id = k.merchant_id
  where k.key_hash = $1 and k.revoked_at is null`;
const ensureMerchantText = `insert into merchants (id, name, created_at) values ($1, $2, $3) on conflict (id) do nothing`;
/** Stores a key unless its hash is stored already; returns the stored key either way (when visible, see addKey). */
const addKeyText = `
  with inserted as (
    insert into api_keys (id, merchant_id, key_hash, key_prefix, created_at) values ($1, $2, $3, $4, $5)
    on conflict (key_hash) do nothing
    returning id
  )
  select exists (select 1 from inserted), ${keyColumns("k")}
  from (values (1)) as one (x) left join api_keys k on k.key_hash = $3`;
const keyByHashText = `select ${keyColumns("k")} from api_keys k where k.key_hash = $1`;
const listKeysText = `select ${keyColumns("k")} from api_keys k order by k.merchant_id, k.created_at, k.id`;
const revokeText = `update api_keys set revoked_at = $2 where id = $1 and revoked_at is null returning id`;
const countActiveText = `select count(*) from api_keys where revoked_at is null`;

/** createPostgresApiKeyStore keeps merchants and key hashes in PostgreSQL. */
export function createPostgresApiKeyStore(db: Database, options: PostgresApiKeyStoreOptions): ApiKeyStore {
  const now = () => options.clock.now().getTime();
  const maxEntries = options.cacheMaxEntries ?? 10_000;
  const known = createBoundedTtlCache<Principal>({ ttlMs: options.cacheTtlMs, maxEntries, now });
  const unknown = createBoundedTtlCache<true>({ ttlMs: options.unknownTtlMs ?? 5_000, maxEntries, now });

  const ensureMerchant = (merchantId: string, name: string) => ({
    text: ensureMerchantText,
    values: [merchantId, name, timestampParam(options.clock.now())],
  });

  /** lookUp asks the database about a key's hash and caches the answer, known or unknown. */
  async function lookUp(hash: string, key: string): Promise<Principal | undefined> {
    const [result] = await db.run(false, [{ text: verifyText, values: [hash] }]);
    const row = result!.rows[0];
    // The lookup is by hash, so its timing says nothing about the key;
    // compare once more in constant time all the same.
    if (!row || !timingSafeEqual(Buffer.from(row[0]!), Buffer.from(hash))) {
      unknown.set(hash, true);
      return undefined;
    }
    const principal = { merchantId: row[1]!, merchantName: row[2]!, livemode: modeOfKey(key) === "live" };
    known.set(hash, principal);
    return { ...principal };
  }

  return {
    // A key verified within the cache's lifetime: what the failed-auth throttle lets through.
    knows: (key) => known.get(hashApiKey(key).toString("hex")) !== undefined,

    async verify(key) {
      const hash = hashApiKey(key).toString("hex");
      const cached = known.get(hash);
      if (cached) return { ...cached };
      if (unknown.get(hash)) return undefined;
      return lookUp(hash, key);
    },

    async recheck(key) {
      const hash = hashApiKey(key).toString("hex");
      known.delete(hash);
      return lookUp(hash, key);
    },

    async ensureMerchant(merchantId, name) {
      checkStorableText([merchantId, name]);
      await db.run(true, [ensureMerchant(merchantId, name)]);
    },

    async addKey(merchantId, key) {
      checkStorableText([merchantId, key]);
      const hash = hashApiKey(key).toString("hex");
      const id = options.newKeyId();
      const createdAt = options.clock.now();
      const [, result] = await db.run(true, [
        ensureMerchant(merchantId, merchantId),
        { text: addKeyText, values: [id, merchantId, hash, key.slice(0, 12), timestampParam(createdAt)] },
      ]);
      unknown.delete(hash);
      const row = result!.rows[0]!;
      let stored: ApiKeyRecord | undefined;
      if (row[0] === "t") stored = { id, merchantId, keyPrefix: key.slice(0, 12), createdAt, revokedAt: null };
      else if (row[1] !== null) stored = readKey(row, 1);
      else {
        // Stored by another instance after this statement's snapshot: read it anew.
        const [again] = await db.run(false, [{ text: keyByHashText, values: [hash] }]);
        stored = again!.rows[0] && readKey(again!.rows[0]);
      }
      if (!stored || stored.merchantId !== merchantId) throw new Error("this API key already belongs to another merchant");
      return stored;
    },

    async listKeys() {
      const [result] = await db.run(false, [{ text: listKeysText, values: [] }]);
      return result!.rows.map((row) => readKey(row));
    },

    async revokeKey(id) {
      checkStorableText([id]);
      const [result] = await db.run(true, [{ text: revokeText, values: [id, timestampParam(options.clock.now())] }]);
      known.clear();
      return result!.rows.length === 1;
    },

    async countActiveKeys() {
      const [result] = await db.run(false, [{ text: countActiveText, values: [] }]);
      return Number(result!.rows[0]![0]);
    },
  };
}
