import { Migration } from "@mikro-orm/migrations";

/**
 * The payment lifecycle: when a pending intent expires, and every attempt to
 * pay it. One successful attempt per intent is a unique index, so even a
 * double-submitted form cannot record two payments.
 */
export class Migration20261121120000_payment_attempts extends Migration {
  override name = "Migration20261121120000_payment_attempts";

  override up(): void {
    this.addSql(`alter table payment_intents add column expires_at timestamptz`);
    // Intents created before this migration get the default time to live.
    this.addSql(`update payment_intents set expires_at = created_at + interval '24 hours'`);
    this.addSql(`alter table payment_intents alter column expires_at set not null`);
    this.addSql(
      `alter table payment_intents add constraint payment_intents_expires_after_created check (expires_at > created_at)`,
    );
    this.addSql(
      `alter table payment_intents add constraint payment_intents_transaction_when_successful
         check (status <> 'successful' or transaction is not null)`,
    );
    // The expiry sweep reads only live pending intents, oldest deadline first.
    this.addSql(
      `create index payment_intents_pending_expiry_idx on payment_intents (expires_at)
         where status = 'pending' and deleted_at is null`,
    );

    this.addSql(`
      create table payment_attempts (
        id text primary key,
        payment_intent_id text not null,
        merchant_id text not null,
        amount bigint not null check (amount > 0),
        method text not null check (method ~ '^[a-z][a-z0-9_]{0,31}$'),
        outcome text not null check (outcome in ('succeeded', 'declined')),
        processor_reference text not null,
        decline_reason text,
        created_at timestamptz not null,
        constraint payment_attempts_processor_reference_key unique (processor_reference),
        constraint payment_attempts_decline_reason check ((outcome = 'declined') = (decline_reason is not null)),
        constraint payment_attempts_intent_fkey foreign key (merchant_id, payment_intent_id)
          references payment_intents (merchant_id, id) on delete cascade
      )`);
    this.addSql(`create index payment_attempts_intent_idx on payment_attempts (payment_intent_id, created_at)`);
    this.addSql(
      `create unique index payment_attempts_one_success_key on payment_attempts (payment_intent_id) where outcome = 'succeeded'`,
    );
  }

  override down(): void {
    this.addSql(`drop table payment_attempts`);
    this.addSql(`drop index payment_intents_pending_expiry_idx`);
    this.addSql(`alter table payment_intents drop constraint payment_intents_transaction_when_successful`);
    this.addSql(`alter table payment_intents drop constraint payment_intents_expires_after_created`);
    this.addSql(`alter table payment_intents drop column expires_at`);
  }
}
