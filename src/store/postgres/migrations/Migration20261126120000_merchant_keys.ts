import { Migration } from "@mikro-orm/migrations";

/**
 * Every table is keyed by its merchant (docs/SCALING.md, "Past one
 * primary"): a primary key, unique constraint, unique index or foreign key
 * of a table distributed by merchant_id names merchant_id, so the tables can
 * be distributed by it as they are. merchants and api_keys are the declared
 * reference tables (test/postgres/merchant-keys.test.ts holds the list).
 *
 * Lookups that arrive without a merchant are served without an extra index
 * where a key can lead with the column they know (a checkout link made
 * before tokens carried their merchant, a processor's message naming our
 * attempt id), and by a plain index that replaces a unique one elsewhere (a
 * refund named by a processor's message, a delivery's completion), so a
 * create writes no more index entries than before.
 */
/**
 * The foreign keys that lean on the (merchant_id, id) keys being replaced:
 * dropped first and made again on the new keys, both ways.
 */
const foreignKeys = [
  ["payment_intent_splits", "payment_intent_splits_intent_fkey", "foreign key (merchant_id, payment_intent_id) references payment_intents (merchant_id, id) on delete cascade"],
  ["payment_intent_splits", "payment_intent_splits_account_fkey", "foreign key (merchant_id, settlement_account_id) references settlement_accounts (merchant_id, id)"],
  ["payment_attempts", "payment_attempts_intent_fkey", "foreign key (merchant_id, payment_intent_id) references payment_intents (merchant_id, id) on delete cascade"],
  ["refunds", "refunds_intent_fkey", "foreign key (merchant_id, payment_intent_id) references payment_intents (merchant_id, id) on delete cascade"],
] as const;

export class Migration20261126120000_merchant_keys extends Migration {
  override name = "Migration20261126120000_merchant_keys";

  override up(): void {
    for (const [table, constraint] of foreignKeys) this.addSql(`alter table ${table} drop constraint ${constraint}`);

    this.addSql(`alter table payment_intents drop constraint payment_intents_pkey`);
    this.addSql(`alter table payment_intents drop constraint payment_intents_merchant_id_key`);
    this.addSql(`alter table payment_intents add constraint payment_intents_pkey primary key (merchant_id, id)`);
    this.addSql(`alter table payment_intents drop constraint payment_intents_checkout_token_key`);
    // Token first: the one index serves a routed lookup (token and merchant) and a link of the older format (token alone).
    this.addSql(`alter table payment_intents add constraint payment_intents_checkout_token_key unique (checkout_token, merchant_id)`);

    this.addSql(`alter table settlement_accounts drop constraint settlement_accounts_pkey`);
    this.addSql(`alter table settlement_accounts drop constraint settlement_accounts_merchant_id_key`);
    this.addSql(`alter table settlement_accounts add constraint settlement_accounts_pkey primary key (merchant_id, id)`);

    this.addSql(`alter table payment_intent_splits drop constraint payment_intent_splits_pkey`);
    this.addSql(`alter table payment_intent_splits add constraint payment_intent_splits_pkey primary key (merchant_id, payment_intent_id, position)`);
    this.addSql(`alter table payment_intent_splits drop constraint payment_intent_splits_account_key`);
    this.addSql(
      `alter table payment_intent_splits add constraint payment_intent_splits_account_key unique (merchant_id, payment_intent_id, settlement_account_id)`,
    );

    this.addSql(`alter table payment_attempts drop constraint payment_attempts_pkey`);
    // Id first: the key also serves a processor's message, which names our attempt id and no merchant.
    this.addSql(`alter table payment_attempts add constraint payment_attempts_pkey primary key (id, merchant_id)`);
    this.addSql(`alter table payment_attempts drop constraint payment_attempts_processor_reference_key`);
    this.addSql(`alter table payment_attempts add constraint payment_attempts_processor_reference_key unique (merchant_id, processor_reference)`);
    this.addSql(`drop index payment_attempts_one_success_key`);
    this.addSql(
      `create unique index payment_attempts_one_success_key on payment_attempts (merchant_id, payment_intent_id) where outcome = 'succeeded'`,
    );

    this.addSql(`drop index refunds_id_key`);
    this.addSql(`create index refunds_id_idx on refunds (id)`);
    this.addSql(`drop index webhook_deliveries_id_key`);
    this.addSql(`create index webhook_deliveries_id_idx on webhook_deliveries (id)`);

    for (const [table, constraint, definition] of foreignKeys) this.addSql(`alter table ${table} add constraint ${constraint} ${definition}`);
  }

  /** Back to keys by id alone (checkout tokens made meanwhile still carry their merchant and are found by the token). */
  override down(): void {
    for (const [table, constraint] of foreignKeys) this.addSql(`alter table ${table} drop constraint ${constraint}`);
    this.addSql(`drop index webhook_deliveries_id_idx`);
    this.addSql(`create unique index webhook_deliveries_id_key on webhook_deliveries (id)`);
    this.addSql(`drop index refunds_id_idx`);
    this.addSql(`create unique index refunds_id_key on refunds (id)`);
    this.addSql(`drop index payment_attempts_one_success_key`);
    this.addSql(`create unique index payment_attempts_one_success_key on payment_attempts (payment_intent_id) where outcome = 'succeeded'`);
    this.addSql(`alter table payment_attempts drop constraint payment_attempts_processor_reference_key`);
    this.addSql(`alter table payment_attempts add constraint payment_attempts_processor_reference_key unique (processor_reference)`);
    this.addSql(`alter table payment_attempts drop constraint payment_attempts_pkey`);
    this.addSql(`alter table payment_attempts add constraint payment_attempts_pkey primary key (id)`);
    this.addSql(`alter table payment_intent_splits drop constraint payment_intent_splits_account_key`);
    this.addSql(`alter table payment_intent_splits add constraint payment_intent_splits_account_key unique (payment_intent_id, settlement_account_id)`);
    this.addSql(`alter table payment_intent_splits drop constraint payment_intent_splits_pkey`);
    this.addSql(`alter table payment_intent_splits add constraint payment_intent_splits_pkey primary key (payment_intent_id, position)`);
    this.addSql(`alter table settlement_accounts drop constraint settlement_accounts_pkey`);
    this.addSql(`alter table settlement_accounts add constraint settlement_accounts_pkey primary key (id)`);
    this.addSql(`alter table settlement_accounts add constraint settlement_accounts_merchant_id_key unique (merchant_id, id)`);
    this.addSql(`alter table payment_intents drop constraint payment_intents_checkout_token_key`);
    this.addSql(`alter table payment_intents add constraint payment_intents_checkout_token_key unique (checkout_token)`);
    this.addSql(`alter table payment_intents drop constraint payment_intents_pkey`);
    this.addSql(`alter table payment_intents add constraint payment_intents_pkey primary key (id)`);
    this.addSql(`alter table payment_intents add constraint payment_intents_merchant_id_key unique (merchant_id, id)`);
    for (const [table, constraint, definition] of foreignKeys) this.addSql(`alter table ${table} add constraint ${constraint} ${definition}`);
  }
}
