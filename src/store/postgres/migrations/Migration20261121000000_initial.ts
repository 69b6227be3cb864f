import { Migration } from "@mikro-orm/migrations";

/**
 * The initial schema. Money is bigint kobo, times are timestamptz, and every
 * child row carries its merchant so composite foreign keys make a split to
 * another merchant's account impossible at the database level.
 */
export class Migration20261121000000_initial extends Migration {
  override name = "Migration20261121000000_initial";

  override up(): void {
    this.addSql(`
      create table merchants (
        id text primary key check (id ~ '^[A-Za-z0-9_.-]{1,64}$'),
        name text not null check (char_length(name) between 1 and 200),
        created_at timestamptz not null default now()
      )`);
    this.addSql(`
      create table api_keys (
        id text primary key,
        merchant_id text not null references merchants (id),
        key_hash char(64) not null,
        key_prefix text not null,
        created_at timestamptz not null default now(),
        revoked_at timestamptz,
        constraint api_keys_key_hash_key unique (key_hash)
      )`);
    this.addSql(`create index api_keys_merchant_idx on api_keys (merchant_id)`);

    this.addSql(`
      create table settlement_accounts (
        id text primary key,
        merchant_id text not null references merchants (id),
        account_name text not null check (char_length(account_name) between 1 and 100),
        account_number char(10) not null check (account_number ~ '^[0-9]{10}$'),
        bank_name text not null check (char_length(bank_name) between 1 and 100),
        bank_code text not null check (bank_code ~ '^[0-9]{3,6}$'),
        created_at timestamptz not null,
        updated_at timestamptz not null,
        constraint settlement_accounts_merchant_id_key unique (merchant_id, id),
        constraint settlement_accounts_merchant_bank_account_key unique (merchant_id, bank_code, account_number)
      )`);
    this.addSql(
      `create index settlement_accounts_merchant_created_idx on settlement_accounts (merchant_id, created_at desc, id desc)`,
    );

    this.addSql(`
      create table payment_intents (
        id text primary key,
        merchant_id text not null references merchants (id),
        amount bigint not null check (amount > 0 and amount <= 1000000000000),
        total_amount bigint not null check (total_amount > 0),
        currency char(3) not null check (currency = 'NGN'),
        country char(2) not null,
        customer_email text not null check (char_length(customer_email) <= 254),
        receipt_email text not null check (char_length(receipt_email) <= 254),
        status text not null check (status in ('pending', 'successful', 'failed', 'expired', 'cancelled')),
        client_reference text not null check (client_reference ~ '^[A-Za-z0-9._:-]{1,100}$'),
        callback_url text check (char_length(callback_url) <= 2048),
        transaction text,
        checkout_token text not null,
        request_fingerprint char(64) not null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        deleted_at timestamptz,
        constraint payment_intents_merchant_id_key unique (merchant_id, id),
        constraint payment_intents_merchant_reference_key unique (merchant_id, client_reference),
        constraint payment_intents_checkout_token_key unique (checkout_token),
        constraint payment_intents_deleted_is_cancelled check ((deleted_at is null) or (status = 'cancelled'))
      )`);
    // Keyset paging: WHERE merchant_id = $1 AND (created_at, id) < ($2, $3)
    // ORDER BY created_at DESC, id DESC reads this index in order, no sort.
    this.addSql(
      `create index payment_intents_merchant_created_idx on payment_intents (merchant_id, created_at desc, id desc)`,
    );

    this.addSql(`
      create table payment_intent_methods (
        payment_intent_id text not null references payment_intents (id) on delete cascade,
        position smallint not null check (position between 0 and 9),
        method text not null check (method ~ '^[a-z][a-z0-9_]{0,31}$'),
        primary key (payment_intent_id, position),
        constraint payment_intent_methods_method_key unique (payment_intent_id, method)
      )`);

    this.addSql(`
      create table payment_intent_splits (
        payment_intent_id text not null,
        position smallint not null check (position between 0 and 9),
        merchant_id text not null,
        settlement_account_id text not null,
        split_amount bigint not null check (split_amount > 0),
        primary key (payment_intent_id, position),
        constraint payment_intent_splits_account_key unique (payment_intent_id, settlement_account_id),
        constraint payment_intent_splits_intent_fkey foreign key (merchant_id, payment_intent_id)
          references payment_intents (merchant_id, id) on delete cascade,
        constraint payment_intent_splits_account_fkey foreign key (merchant_id, settlement_account_id)
          references settlement_accounts (merchant_id, id)
      )`);
    this.addSql(`create index payment_intent_splits_account_idx on payment_intent_splits (merchant_id, settlement_account_id)`);
  }

  override down(): void {
    this.addSql(`drop table payment_intent_splits`);
    this.addSql(`drop table payment_intent_methods`);
    this.addSql(`drop table payment_intents`);
    this.addSql(`drop table settlement_accounts`);
    this.addSql(`drop table api_keys`);
    this.addSql(`drop table merchants`);
  }
}
