import type { SecretBox } from "../../lib/secret-box.js";
import { rotateSigningSecrets } from "../../domain/signing-secrets.js";
import { checkStorableText, isStorableText } from "../storable-text.js";
import type {
  CreateEndpointResult,
  DeliveryListQuery,
  RedeliveryRequest,
  RedeliveryResult,
  WebhookEndpointStore,
} from "../webhook-endpoint-store.js";
import type { Database } from "./database.js";
import { textArrayParam, timestampParam } from "./sql-values.js";
import { deliveryColumns, endpointColumns, openSecrets, readDelivery, readEndpoint, sealSecrets } from "./webhook-rows.js";

/**
 * The first key of the advisory lock that serializes endpoint registrations
 * of one merchant (the second is the merchant id's hash), so concurrent
 * registrations never pass the cap. An arbitrary constant of this service,
 * distinct from the settlement accounts' one.
 */
const endpointLockNamespace = 7_246_340;
const lockText = `select pg_advisory_xact_lock(${endpointLockNamespace}, hashtext($1))`;

/** Inside the lock (taken by the statement before it, so this snapshot sees every registration committed before). */
const insertText = `
  insert into webhook_endpoints as w (merchant_id, id, url, event_types, description, status, secrets, created_at, updated_at, livemode)
  select $1, $2, $3, $4::text[], $5, 'enabled', $6::jsonb, $7::timestamptz, $7::timestamptz, $9
  where (select count(*) from webhook_endpoints where merchant_id = $1 and deleted_at is null) < $8::int8
  returning ${endpointColumns("w")}`;

const listText = `
  select ${endpointColumns("w")} from webhook_endpoints w
  where w.merchant_id = $1 and w.deleted_at is null
  order by w.created_at, w.id`;
const byIdText = `select ${endpointColumns("w")} from webhook_endpoints w where w.merchant_id = $1 and w.id = $2 and w.deleted_at is null`;

const deleteText = `
  update webhook_endpoints set deleted_at = $3, updated_at = $3
  where merchant_id = $1 and id = $2 and deleted_at is null
  returning id`;
/** After deleteText in the same transaction: its idle pending deliveries end; those in flight end when they complete. */
const failPendingText = `
  update webhook_deliveries set status = 'failed', next_attempt_at = null, updated_at = $3,
    lease_owner = null, lease_token = null, lease_expires_at = null
  where merchant_id = $1 and endpoint_id = $2 and status = 'pending'
    and (lease_expires_at is null or lease_expires_at <= now())
    and exists (select 1 from webhook_endpoints w where w.merchant_id = $1 and w.id = $2 and w.deleted_at is not null)`;

const lockSecretsText = `
  select secrets from webhook_endpoints
  where merchant_id = $1 and id = $2 and deleted_at is null
  for no key update`;
const updateSecretsText = `
  update webhook_endpoints w set secrets = $3::jsonb, updated_at = $4
  where w.merchant_id = $1 and w.id = $2
  returning ${endpointColumns("w")}`;

const endpointExistsText = `select 1 from webhook_endpoints where merchant_id = $1 and id = $2 and deleted_at is null`;

/** The shape of a deliveries page: status condition, cursor. */
const deliveryPageTexts = new Map<string, string>();
function deliveryPageText(byStatus: boolean, after: boolean): string {
  const key = `${byStatus}|${after}`;
  let text = deliveryPageTexts.get(key);
  if (text) return text;
  const conditions = ["d.merchant_id = $1", "d.endpoint_id = $2"];
  let n = 3;
  if (byStatus) conditions.push(`d.status = $${++n}`);
  if (after) conditions.push(`(d.created_at, d.id) < ($${++n}::timestamptz, $${++n})`);
  text = `
    select ${deliveryColumns} from webhook_deliveries d
    join events ev on ev.merchant_id = d.merchant_id and ev.id = d.event_id
    where ${conditions.join(" and ")}
    order by d.created_at desc, d.id desc
    limit $3`;
  deliveryPageTexts.set(key, text);
  return text;
}

const eventTypeText = `select type from events where merchant_id = $1 and id = $2`;
const oneEndpointText = `select id, status from webhook_endpoints where merchant_id = $1 and id = $2 and deleted_at is null`;
const takingEndpointsText = `
  select id from webhook_endpoints
  where merchant_id = $1 and status = 'enabled' and deleted_at is null
    and livemode = (select e.livemode from events e where e.merchant_id = $1 and e.id = $2)
    and (cardinality(event_types) = 0 or (select e.type from events e where e.merchant_id = $1 and e.id = $2) = any(event_types))
  order by created_at, id`;
/** Fresh deliveries, due at once, to endpoints still enabled and not deleted. */
const redeliverText = `
  with queued as (
    insert into webhook_deliveries (merchant_id, id, event_id, endpoint_id, status, next_attempt_at, created_at, updated_at)
    select $1, q.id, $2, q.endpoint_id, 'pending', $5::timestamptz, $5::timestamptz, $5::timestamptz
    from unnest($3::text[], $4::text[]) with ordinality as q (id, endpoint_id, n)
    join webhook_endpoints w on w.merchant_id = $1 and w.id = q.endpoint_id and w.status = 'enabled' and w.deleted_at is null
    order by q.n
    returning *
  )
  select ${deliveryColumns} from queued d join events ev on ev.merchant_id = d.merchant_id and ev.id = d.event_id
  order by d.created_at, d.id`;

export interface PostgresWebhookEndpointStoreOptions {
  /** Seals signing secrets at rest (WEBHOOK_SECRET_KEY), each bound to its endpoint id. */
  secretBox: SecretBox;
}

/**
 * createPostgresWebhookEndpointStore keeps webhook endpoints in PostgreSQL
 * (WebhookEndpointStore, store/webhook-endpoint-store.ts). Every call is one
 * round trip, except a rotation (the secrets are read under the row lock,
 * rotated here, then written) and a redelivery (the endpoints are read, the
 * deliveries' ids made here, then written).
 */
export function createPostgresWebhookEndpointStore(db: Database, options: PostgresWebhookEndpointStoreOptions): WebhookEndpointStore {
  const box = options.secretBox;
  const storable = (...values: string[]) => values.every(isStorableText);

  return {
    async create(endpoint, maxPerMerchant): Promise<CreateEndpointResult> {
      checkStorableText([endpoint.id, endpoint.merchantId, endpoint.url, endpoint.description, endpoint.secret, ...endpoint.eventTypes]);
      const secrets = sealSecrets(box, endpoint.id, [{ secret: endpoint.secret, expiresAt: null }]);
      const [, result] = await db.run(true, [
        { text: lockText, values: [endpoint.merchantId] },
        {
          text: insertText,
          values: [
            endpoint.merchantId,
            endpoint.id,
            endpoint.url,
            textArrayParam(endpoint.eventTypes),
            endpoint.description,
            secrets,
            timestampParam(endpoint.createdAt),
            String(maxPerMerchant),
            String(endpoint.livemode),
          ],
        },
      ]);
      const row = result!.rows[0];
      return row ? { created: true, endpoint: readEndpoint(row) } : { created: false, reason: "limit" };
    },

    async list(merchantId) {
      if (!storable(merchantId)) return [];
      const [result] = await db.run(false, [{ text: listText, values: [merchantId] }]);
      return result!.rows.map((row) => readEndpoint(row));
    },

    async findById(merchantId, id) {
      if (!storable(merchantId, id)) return undefined;
      const [result] = await db.run(false, [{ text: byIdText, values: [merchantId, id] }]);
      return result!.rows[0] ? readEndpoint(result!.rows[0]) : undefined;
    },

    async delete(merchantId, id, at) {
      if (!storable(merchantId, id)) return false;
      const values = [merchantId, id, timestampParam(at)];
      const [deleted] = await db.run(true, [
        { text: deleteText, values },
        { text: failPendingText, values },
      ]);
      return deleted!.rows.length > 0;
    },

    async rotateSecret(merchantId, id, newSecret, at, graceMs) {
      if (!storable(merchantId, id)) return undefined;
      checkStorableText([newSecret]);
      return db.transaction(async (tx) => {
        const [locked] = await tx.run([{ text: lockSecretsText, values: [merchantId, id] }]);
        const row = locked!.rows[0];
        if (!row) return undefined;
        // Opened and sealed again: a secret stored before a key was set is encrypted now.
        const secrets = rotateSigningSecrets(openSecrets(box, id, row[0]!), newSecret, at, graceMs);
        const [updated] = await tx.commit([
          { text: updateSecretsText, values: [merchantId, id, sealSecrets(box, id, secrets), timestampParam(at)] },
        ]);
        return readEndpoint(updated!.rows[0]!);
      });
    },

    async listDeliveries(query: DeliveryListQuery) {
      if (!storable(query.merchantId, query.endpointId, query.after?.id ?? "")) return undefined;
      const values: (string | null)[] = [query.merchantId, query.endpointId, String(query.limit)];
      if (query.status !== undefined) values.push(query.status);
      if (query.after) values.push(timestampParam(query.after.createdAt), query.after.id);
      const [exists, page] = await db.run(false, [
        { text: endpointExistsText, values: [query.merchantId, query.endpointId] },
        { text: deliveryPageText(query.status !== undefined, query.after !== undefined), values },
      ]);
      return exists!.rows.length === 0 ? undefined : page!.rows.map(readDelivery);
    },

    async redeliver(request: RedeliveryRequest): Promise<RedeliveryResult> {
      const { merchantId, eventId, endpointId } = request;
      if (!storable(merchantId, eventId, endpointId ?? "")) return { kind: "no-event" };
      // The event and its endpoints in one round trip.
      const [event, endpoints] = await db.run(false, [
        { text: eventTypeText, values: [merchantId, eventId] },
        endpointId !== undefined
          ? { text: oneEndpointText, values: [merchantId, endpointId] }
          : { text: takingEndpointsText, values: [merchantId, eventId] },
      ]);
      if (event!.rows.length === 0) return { kind: "no-event" };
      if (endpointId !== undefined && endpoints!.rows[0]?.[1] === "disabled") return { kind: "endpoint-disabled" };
      const endpointIds = endpoints!.rows.map((row) => row[0]!);
      if (endpointIds.length === 0) return { kind: "no-endpoint" };
      const ids = endpointIds.map(() => request.deliveryId());
      const [queued] = await db.run(true, [
        {
          text: redeliverText,
          values: [merchantId, eventId, textArrayParam(ids), textArrayParam(endpointIds), timestampParam(request.at)],
        },
      ]);
      return { kind: "queued", deliveries: queued!.rows.map(readDelivery) };
    },
  };
}
