import { Migration } from "@mikro-orm/migrations";

/**
 * Events, webhook endpoints and webhook deliveries (README, Webhooks). Each
 * table is keyed by (merchant_id, id), and deliveries reference their event
 * and endpoint through foreign keys that include the merchant.
 *
 * events.xid and events.seq give the stream its order (EventStore.readAfter):
 * xid is the writing transaction's id, so a reader can hold back events of
 * transactions that may still commit (xid >= pg_snapshot_xmin) and never
 * skip one that commits late; seq orders the events of one transaction.
 */
export class Migration20261123120000_events_webhooks extends Migration {
  override name = "Migration20261123120000_events_webhooks";

  override up(): void {
    this.addSql(`
      create table events (
        merchant_id text not null references merchants (id),
        id text not null,
        type text not null check (type in ('payment_intent.created', 'payment_intent.succeeded',
          'payment_intent.payment_failed', 'payment_intent.failed', 'payment_intent.expired', 'payment_intent.cancelled')),
        payment_intent_id text not null,
        created_at timestamptz not null,
        payload bytea not null,
        body text not null,
        xid xid8 not null default pg_current_xact_id(),
        seq bigserial not null,
        primary key (merchant_id, id)
      )`);
    // ListEvents: keyset pages newest first, all types or one intent's.
    this.addSql(`create index events_merchant_created_idx on events (merchant_id, created_at desc, id desc)`);
    this.addSql(`create index events_merchant_intent_idx on events (merchant_id, payment_intent_id, created_at desc, id desc)`);
    // Retention: the oldest events of every merchant. On an expression, so the
    // merchant-scoped lists never take it for theirs.
    this.addSql(`create index events_retention_idx on events ((created_at at time zone 'UTC'))`);
    // StreamEvents: commit order.
    this.addSql(`create index events_merchant_stream_idx on events (merchant_id, xid, seq)`);

    this.addSql(`
      create table webhook_endpoints (
        merchant_id text not null references merchants (id),
        id text not null,
        url text not null check (char_length(url) <= 2048),
        event_types text[] not null,
        description text,
        status text not null check (status in ('enabled', 'disabled')),
        disabled_reason text check (disabled_reason in ('gone', 'failing')),
        failing_since timestamptz,
        -- [{"secret": SecretBox-sealed, "expiresAt": epoch ms or null}], current first.
        secrets jsonb not null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        deleted_at timestamptz,
        primary key (merchant_id, id),
        constraint webhook_endpoints_disabled_reason check ((status = 'disabled') = (disabled_reason is not null))
      )`);

    this.addSql(`
      create table webhook_deliveries (
        merchant_id text not null,
        id text not null,
        event_id text not null,
        endpoint_id text not null,
        status text not null check (status in ('pending', 'succeeded', 'failed')),
        -- [{"at": epoch ms, "statusCode", "durationMs", "error"}], oldest first.
        attempts jsonb not null default '[]',
        next_attempt_at timestamptz,
        lease_owner text,
        lease_token text,
        lease_expires_at timestamptz,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        primary key (merchant_id, id),
        constraint webhook_deliveries_event_fkey foreign key (merchant_id, event_id) references events (merchant_id, id),
        constraint webhook_deliveries_endpoint_fkey foreign key (merchant_id, endpoint_id)
          references webhook_endpoints (merchant_id, id),
        constraint webhook_deliveries_next_attempt check ((status = 'pending') = (next_attempt_at is not null))
      )`);
    // The delivery engine finds a delivery by id alone (its lease names it).
    this.addSql(`create unique index webhook_deliveries_id_key on webhook_deliveries (id)`);
    // Due deliveries, for the claim and the queue's figures.
    this.addSql(`create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at) where status = 'pending'`);
    // One endpoint's pending deliveries: its leases and its backlog, oldest due first.
    this.addSql(
      `create index webhook_deliveries_endpoint_pending_idx on webhook_deliveries (merchant_id, endpoint_id, next_attempt_at)
         where status = 'pending'`,
    );
    // An event's deliveries: retention, redelivery.
    this.addSql(`create index webhook_deliveries_event_idx on webhook_deliveries (merchant_id, event_id)`);
    // ListWebhookDeliveries: one endpoint's, newest first.
    this.addSql(
      `create index webhook_deliveries_endpoint_created_idx on webhook_deliveries (merchant_id, endpoint_id, created_at desc, id desc)`,
    );
  }

  override down(): void {
    this.addSql(`drop table webhook_deliveries`);
    this.addSql(`drop table webhook_endpoints`);
    this.addSql(`drop table events`);
  }
}
