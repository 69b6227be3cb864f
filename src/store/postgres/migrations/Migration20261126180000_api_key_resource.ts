import { Migration } from "@mikro-orm/migrations";

/**
 * API keys as a resource (issue 23, §2): a name, a mode, scopes, client
 * networks, an expiry (which a roll's grace end also sets), when the key was
 * last used, and its last 4 characters. Keys stored before keep working as
 * they were: no name, scopes or networks (everything, from anywhere), no
 * expiry, their mode read from their stored prefix as modeOfKey reads a
 * key's, and no last4 (the key itself was never stored). A merchant's keys
 * are listed by (merchant_id, created_at): the index replaces the one on
 * merchant_id alone. The key API's changes record api_key.* events, whose
 * payment_intent_id is '' (they report a key, not an intent).
 */
export class Migration20261126180000_api_key_resource extends Migration {
  override name = "Migration20261126180000_api_key_resource";

  override up(): void {
    this.addSql(`
      alter table api_keys
        add column name text not null default '' check (char_length(name) <= 100),
        add column mode text not null default 'test' check (mode in ('test', 'live')),
        add column scopes text[] not null default '{}',
        add column allowed_cidrs text[] not null default '{}',
        add column last4 text not null default '',
        add column expires_at timestamptz,
        add column last_used_at timestamptz`);
    this.addSql(`update api_keys set mode = 'live' where key_prefix like 'sk\\_live\\_%'`);
    this.addSql(`create index api_keys_merchant_created_idx on api_keys (merchant_id, created_at, id)`);
    this.addSql(`drop index api_keys_merchant_idx`);
    this.addSql(`alter table events drop constraint events_type_check`);
    this.addSql(`
      alter table events add constraint events_type_check check (type in ('payment_intent.created', 'payment_intent.succeeded',
        'payment_intent.payment_failed', 'payment_intent.failed', 'payment_intent.expired', 'payment_intent.cancelled',
        'payment_intent.processing', 'payment_intent.requires_action', 'refund.created', 'refund.succeeded', 'refund.failed',
        'api_key.created', 'api_key.rolled', 'api_key.revoked'))`);
  }

  override down(): void {
    this.addSql(`alter table events drop constraint events_type_check`);
    this.addSql(`delete from webhook_deliveries d using events e where d.merchant_id = e.merchant_id and d.event_id = e.id and e.type like 'api\\_key.%'`);
    this.addSql(`delete from events where type like 'api\\_key.%'`);
    this.addSql(`
      alter table events add constraint events_type_check check (type in ('payment_intent.created', 'payment_intent.succeeded',
        'payment_intent.payment_failed', 'payment_intent.failed', 'payment_intent.expired', 'payment_intent.cancelled',
        'payment_intent.processing', 'payment_intent.requires_action', 'refund.created', 'refund.succeeded', 'refund.failed'))`);
    this.addSql(`create index api_keys_merchant_idx on api_keys (merchant_id)`);
    this.addSql(`drop index api_keys_merchant_created_idx`);
    this.addSql(`
      alter table api_keys
        drop column name, drop column mode, drop column scopes, drop column allowed_cidrs,
        drop column last4, drop column expires_at, drop column last_used_at`);
  }
}
