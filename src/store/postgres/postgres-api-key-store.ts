import { timingSafeEqual } from "node:crypto";
import { hashApiKey } from "../../auth/hash-api-key.js";
import { modeOfKey, type ApiKeyMode } from "../../auth/api-key-format.js";
import { isKeyActive, type ApiKeyRecord } from "../../domain/api-key.js";
import type { Principal } from "../../domain/principal.js";
import type { Clock } from "../../lib/clock.js";
import type { ApiKeyStore } from "../api-key-store.js";
import { checkStorableText } from "../storable-text.js";
import { createBoundedTtlCache } from "./bounded-ttl-cache.js";
import type { Database } from "./database.js";
import type { EventOutbox } from "../event-store.js";
import type { EventType } from "../../domain/event.js";
import type { StatementStep } from "./statement-pipeline.js";
import { keyEventEndpointsText, recordKeyEvent } from "./event-sql.js";
import { epochMs, nullableTimestampParam, parseEpochMs, parseNullableEpochMs, parsePlainTextArray, textArrayParam, timestampParam } from "./sql-values.js";

export interface PostgresApiKeyStoreOptions {
  clock: Clock;
  newKeyId(): string;
  /** Records api_key.* events with the key API's changes, in their transaction; absent, none. */
  outbox?: EventOutbox;
  /**
   * How long a verified key is trusted without asking the database again.
   * Keeps authentication off the hot path; a revoked key stops working within
   * this time on every instance (at once on the instance that revoked it).
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

/** A key's columns as readKey reads them; t is the table or CTE alias. Scopes and networks need no quoting (their rules: a-z _ : and hex digits . : /). */
const keyColumns = (t: string) =>
  `${t}.id, ${t}.merchant_id, ${t}.key_prefix, ${epochMs(`${t}.created_at`)}, ${epochMs(`${t}.revoked_at`)}, ` +
  `${t}.name, ${t}.mode, ${t}.scopes::text, ${t}.allowed_cidrs::text, ${t}.last4, ${epochMs(`${t}.expires_at`)}, ${epochMs(`${t}.last_used_at`)}`;
const keyColumnCount = 12;

function readKey(row: readonly (string | null)[], start = 0): ApiKeyRecord {
  return {
    id: row[start]!,
    merchantId: row[start + 1]!,
    keyPrefix: row[start + 2]!,
    createdAt: parseEpochMs(row[start + 3]!),
    revokedAt: parseNullableEpochMs(row[start + 4] ?? null),
    name: row[start + 5]!,
    mode: row[start + 6] as ApiKeyMode,
    scopes: parsePlainTextArray(row[start + 7]!),
    allowedCidrs: parsePlainTextArray(row[start + 8]!),
    last4: row[start + 9]!,
    expiresAt: parseNullableEpochMs(row[start + 10] ?? null),
    lastUsedAt: parseNullableEpochMs(row[start + 11] ?? null),
  };
}

const verifyText = `
  select k.key_hash, m.id, m.name, k.id, k.mode, k.scopes::text, k.allowed_cidrs::text, ${epochMs("k.expires_at")}
  from api_keys k join merchants m on m.id = k.merchant_id
  where k.key_hash = $1 and k.revoked_at is null`;
const ensureMerchantText = `insert into merchants (id, name, created_at) values ($1, $2, $3) on conflict (id) do nothing`;
/** Stores a key unless its hash is stored already; returns the stored key either way (when visible, see addKey). */
const addKeyText = `
  with inserted as (
    insert into api_keys (id, merchant_id, key_hash, key_prefix, created_at, mode, last4) values ($1, $2, $3, $4, $5, $6, $7)
    on conflict (key_hash) do nothing
    returning *
  )
  select exists (select 1 from inserted), ${keyColumns("k")}
  from (values (1)) as one (x) left join api_keys k on k.key_hash = $3`;
const createKeyText = `
  insert into api_keys as k (id, merchant_id, key_hash, key_prefix, created_at, mode, last4, name, scopes, allowed_cidrs, expires_at)
  values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
  returning ${keyColumns("k")}`;
const keyByHashText = `select ${keyColumns("k")} from api_keys k where k.key_hash = $1`;
const listKeysText = `select ${keyColumns("k")} from api_keys k order by k.merchant_id, k.created_at, k.id`;
const listMerchantKeysText = `
  select ${keyColumns("k")} from api_keys k
  where k.merchant_id = $1 and k.revoked_at is null and k.mode = any($2::text[])
  order by k.created_at, k.id`;
const findKeyText = `select ${keyColumns("k")} from api_keys k where k.merchant_id = $1 and k.id = $2 and k.revoked_at is null`;
/**
 * A roll in one statement: the old key, if active at $5, ends at $4 (or
 * sooner, as it was), and its successor copies its attributes, the expiry
 * as it was before this statement (sub-statements all read the statement's
 * snapshot, so the subquery sees the old value).
 */
const rollText = `
  with old as (
    update api_keys k set expires_at = case when k.expires_at is null or k.expires_at > $4 then $4::timestamptz else k.expires_at end
    where k.merchant_id = $1 and k.id = $2 and k.revoked_at is null and (k.expires_at is null or k.expires_at > $5)
    returning k.*, (select o.expires_at from api_keys o where o.merchant_id = k.merchant_id and o.id = k.id) as original_expires_at
  ), created as (
    insert into api_keys (id, merchant_id, key_hash, key_prefix, created_at, mode, last4, name, scopes, allowed_cidrs, expires_at)
    select $3, old.merchant_id, $6, $7, $5, old.mode, $8, old.name, old.scopes, old.allowed_cidrs, old.original_expires_at from old
    returning *
  )
  select ${keyColumns("old")}, ${keyColumns("created")} from old, created`;
const revokeText = `update api_keys set revoked_at = $2 where id = $1 and revoked_at is null returning id`;
const revokeMerchantKeyText = `
  update api_keys k set revoked_at = $3 where k.merchant_id = $1 and k.id = $2 and k.revoked_at is null
  returning ${keyColumns("k")}`;
/** lastUsedAt only moves forward, so two instances' flushes never take it back. */
const markUsedText = `
  update api_keys set last_used_at = $3
  where merchant_id = $1 and id = $2 and (last_used_at is null or last_used_at < $3)`;
const countActiveText = `select count(*) from api_keys where revoked_at is null`;

/** createPostgresApiKeyStore keeps merchants and key hashes in PostgreSQL. */
export function createPostgresApiKeyStore(db: Database, options: PostgresApiKeyStoreOptions): ApiKeyStore {
  const now = () => options.clock.now().getTime();
  const maxEntries = options.cacheMaxEntries ?? 10_000;
  const known = createBoundedTtlCache<Principal>({ ttlMs: options.cacheTtlMs, maxEntries, now });
  const unknown = createBoundedTtlCache<true>({ ttlMs: options.unknownTtlMs ?? 5_000, maxEntries, now });
  const active = (principal: Principal) => isKeyActive(principal, options.clock.now());

  const ensureMerchant = (merchantId: string, name: string) => ({
    text: ensureMerchantText,
    values: [merchantId, name, timestampParam(options.clock.now())],
  });

  /** lookUp asks the database about a key's hash and caches the answer, known or unknown. */
  async function lookUp(hash: string): Promise<Principal | undefined> {
    const [result] = await db.run(false, [{ text: verifyText, values: [hash] }]);
    const row = result!.rows[0];
    // The lookup is by hash, so its timing says nothing about the key;
    // compare once more in constant time all the same.
    if (!row || !timingSafeEqual(Buffer.from(row[0]!), Buffer.from(hash))) {
      unknown.set(hash, true);
      return undefined;
    }
    const principal: Principal = {
      merchantId: row[1]!,
      merchantName: row[2]!,
      keyId: row[3]!,
      livemode: row[4] === "live",
      scopes: parsePlainTextArray(row[5]!),
      allowedCidrs: parsePlainTextArray(row[6]!),
      expiresAt: parseNullableEpochMs(row[7] ?? null),
    };
    if (!active(principal)) {
      unknown.set(hash, true);
      return undefined;
    }
    known.set(hash, principal);
    return { ...principal };
  }

  /**
   * changeWithEvent runs a key API write and, in its transaction, records
   * its api_key.* event for the key as the write left it (`read` picks it
   * from the last step's rows; undefined: nothing changed, nothing
   * recorded), with a delivery per enabled endpoint of the key's mode taking
   * the type.
   */
  async function changeWithEvent(
    type: EventType,
    merchantId: string,
    steps: readonly StatementStep[],
    read: (rows: readonly (readonly (string | null)[])[]) => ApiKeyRecord | undefined,
  ): Promise<ApiKeyRecord | undefined> {
    const outbox = options.outbox;
    if (!outbox?.renderKey) {
      const results = await db.run(true, steps);
      return read(results[results.length - 1]!.rows);
    }
    const recorded = await db.transaction(async (tx) => {
      const results = await tx.run([...steps, { text: keyEventEndpointsText, values: [merchantId, type] }]);
      const record = read(results[results.length - 2]!.rows);
      if (!record) return undefined;
      const live = record.mode === "live";
      const endpoints = results[results.length - 1]!.rows.filter((row) => (row[1] === "t") === live).map((row) => row[0]!);
      const event = recordKeyEvent(outbox, type, record, options.clock.now(), endpoints);
      await tx.commit(event ? [event.step] : []);
      return { record, event: event?.event };
    });
    if (recorded?.event) outbox.committed([recorded.event]);
    return recorded?.record;
  }

  return {
    // A key verified within the cache's lifetime: what the failed-auth throttle lets through.
    knows: (key) => {
      const cached = known.get(hashApiKey(key).toString("hex"));
      return cached !== undefined && active(cached);
    },

    async verify(key) {
      const hash = hashApiKey(key).toString("hex");
      const cached = known.get(hash);
      // The cache holds the expiry: an expired key is refused at once, as a revoked one is here.
      if (cached) return active(cached) ? { ...cached } : undefined;
      if (unknown.get(hash)) return undefined;
      return lookUp(hash);
    },

    async recheck(key) {
      const hash = hashApiKey(key).toString("hex");
      known.delete(hash);
      return lookUp(hash);
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
        { text: addKeyText, values: [id, merchantId, hash, key.slice(0, 12), timestampParam(createdAt), modeOfKey(key), key.slice(-4)] },
      ]);
      unknown.delete(hash);
      const row = result!.rows[0]!;
      let stored: ApiKeyRecord | undefined;
      if (row[0] === "t") {
        stored = {
          id, merchantId, keyPrefix: key.slice(0, 12), last4: key.slice(-4), createdAt, revokedAt: null, mode: modeOfKey(key),
          name: "", scopes: [], allowedCidrs: [], expiresAt: null, lastUsedAt: null,
        };
      } else if (row[1] !== null) stored = readKey(row, 1);
      else {
        // Stored by another instance after this statement's snapshot: read it anew.
        const [again] = await db.run(false, [{ text: keyByHashText, values: [hash] }]);
        stored = again!.rows[0] && readKey(again!.rows[0]);
      }
      if (!stored || stored.merchantId !== merchantId) throw new Error("this API key already belongs to another merchant");
      return stored;
    },

    async createKey(key) {
      checkStorableText([key.merchantId, key.name, ...key.scopes, ...key.allowedCidrs]);
      const hash = hashApiKey(key.key).toString("hex");
      const created = await changeWithEvent(
        "api_key.created",
        key.merchantId,
        [
          ensureMerchant(key.merchantId, key.merchantId),
          {
            text: createKeyText,
            values: [
              options.newKeyId(), key.merchantId, hash, key.key.slice(0, 12), timestampParam(options.clock.now()), key.mode, key.key.slice(-4),
              key.name, textArrayParam(key.scopes), textArrayParam(key.allowedCidrs), nullableTimestampParam(key.expiresAt),
            ],
          },
        ],
        (rows) => readKey(rows[0]!),
      );
      unknown.delete(hash);
      return created!;
    },

    async listMerchantKeys(merchantId, modes) {
      const [result] = await db.run(false, [{ text: listMerchantKeysText, values: [merchantId, textArrayParam(modes)] }]);
      return result!.rows.map((row) => readKey(row));
    },

    async findKey(merchantId, id) {
      checkStorableText([id]);
      const [result] = await db.run(false, [{ text: findKeyText, values: [merchantId, id] }]);
      const row = result!.rows[0];
      return row && readKey(row);
    },

    async rollKey(merchantId, id, newKey, endsAt) {
      checkStorableText([id]);
      const hash = hashApiKey(newKey).toString("hex");
      let created: ApiKeyRecord | undefined;
      const old = await changeWithEvent(
        "api_key.rolled",
        merchantId,
        [
          {
            text: rollText,
            values: [
              merchantId, id, options.newKeyId(), timestampParam(endsAt), timestampParam(options.clock.now()),
              hash, newKey.slice(0, 12), newKey.slice(-4),
            ],
          },
        ],
        (rows) => {
          const row = rows[0];
          created = row && readKey(row, keyColumnCount);
          return row && readKey(row);
        },
      );
      // The old key's cached principal holds its former expiry: forget it here (other instances within cacheTtlMs).
      known.clear();
      unknown.delete(hash);
      return old && created && { old, created };
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

    async revokeMerchantKey(merchantId, id) {
      checkStorableText([id]);
      const revoked = await changeWithEvent(
        "api_key.revoked",
        merchantId,
        [{ text: revokeMerchantKeyText, values: [merchantId, id, timestampParam(options.clock.now())] }],
        (rows) => rows[0] && readKey(rows[0]),
      );
      known.clear();
      return revoked;
    },

    async markUsed(merchantId, id, at) {
      await db.run(true, [{ text: markUsedText, values: [merchantId, id, timestampParam(at)] }]);
    },

    async countActiveKeys() {
      const [result] = await db.run(false, [{ text: countActiveText, values: [] }]);
      return Number(result!.rows[0]![0]);
    },
  };
}
