import { Migration } from "@mikro-orm/migrations";

/**
 * The asynchronous payment lifecycle (docs/payments.md, The payment
 * lifecycle). An attempt is written `processing`, with its processor and
 * idempotency key, before the processor is called, and settled once
 * afterwards; while it is open (processing, requires_action) it has a due
 * time for the reconciler and may carry the reconciler's lease, and its
 * intent is processing or requires_action (with the customer's next action).
 * One open attempt and one paying success per intent are unique indexes; a
 * late success is recorded with its reason and does not count as paying.
 * The test processor is named "test" from now on, on refunds too.
 */
export class Migration20261126130000_attempt_lifecycle extends Migration {
  override name = "Migration20261126130000_attempt_lifecycle";

  override up(): void {
    this.addSql(`alter table payment_intents drop constraint payment_intents_status_check`);
    this.addSql(`
      alter table payment_intents add constraint payment_intents_status_check
        check (status in ('pending', 'processing', 'requires_action', 'successful', 'failed', 'expired', 'cancelled'))`);
    this.addSql(`alter table payment_intents add column next_action_url text`);
    this.addSql(
      `alter table payment_intents add constraint payment_intents_next_action check ((status = 'requires_action') = (next_action_url is not null))`,
    );

    this.addSql(`alter table payment_attempts drop constraint payment_attempts_outcome_check`);
    this.addSql(`
      alter table payment_attempts add constraint payment_attempts_outcome_check
        check (outcome in ('processing', 'requires_action', 'succeeded', 'declined'))`);
    this.addSql(`alter table payment_attempts add column processor text not null default 'test'`);
    this.addSql(`alter table payment_attempts alter column processor drop default`);
    this.addSql(`alter table payment_attempts add column idempotency_key text`);
    this.addSql(`update payment_attempts set idempotency_key = id`);
    this.addSql(`alter table payment_attempts alter column idempotency_key set not null`);
    this.addSql(`alter table payment_attempts alter column processor_reference drop not null`);
    this.addSql(`
      alter table payment_attempts
        add column next_action_url text,
        add column late_success text check (late_success in ('payment_after_close', 'duplicate_payment')),
        add column settled_at timestamptz,
        add column check_after timestamptz,
        add column lease_token text,
        add column lease_expires_at timestamptz,
        add column alarmed boolean not null default false`);
    this.addSql(`update payment_attempts set settled_at = created_at`);
    this.addSql(`
      alter table payment_attempts
        add constraint payment_attempts_settled check ((outcome in ('succeeded', 'declined')) = (settled_at is not null)),
        add constraint payment_attempts_check_after check ((outcome in ('processing', 'requires_action')) = (check_after is not null)),
        add constraint payment_attempts_next_action check ((outcome = 'requires_action') = (next_action_url is not null)),
        add constraint payment_attempts_late_success check (late_success is null or outcome = 'succeeded'),
        add constraint payment_attempts_idempotency_key unique (processor, idempotency_key, merchant_id)`);
    this.addSql(`drop index payment_attempts_one_success_key`);
    this.addSql(
      `create unique index payment_attempts_one_success_key on payment_attempts (merchant_id, payment_intent_id) where outcome = 'succeeded' and late_success is null`,
    );
    this.addSql(
      `create unique index payment_attempts_one_open_key on payment_attempts (merchant_id, payment_intent_id) where outcome in ('processing', 'requires_action')`,
    );
    // The reconciler's claim: open attempts, earliest check first; and the alarm's scan of old ones.
    this.addSql(`create index payment_attempts_due_idx on payment_attempts (check_after) where outcome in ('processing', 'requires_action')`);
    this.addSql(
      `create index payment_attempts_alarm_idx on payment_attempts (created_at) where outcome in ('processing', 'requires_action') and not alarmed`,
    );
    this.addSql(`update refunds set processor = 'test' where processor = 'test mode'`);
  }

  override down(): void {
    this.addSql(`update refunds set processor = 'test mode' where processor = 'test'`);
    this.addSql(`delete from payment_attempts where outcome in ('processing', 'requires_action') or late_success is not null`);
    this.addSql(`update payment_intents set status = 'pending', next_action_url = null where status in ('processing', 'requires_action')`);
    this.addSql(`drop index payment_attempts_alarm_idx`);
    this.addSql(`drop index payment_attempts_due_idx`);
    this.addSql(`drop index payment_attempts_one_open_key`);
    this.addSql(`drop index payment_attempts_one_success_key`);
    this.addSql(`create unique index payment_attempts_one_success_key on payment_attempts (merchant_id, payment_intent_id) where outcome = 'succeeded'`);
    this.addSql(`
      alter table payment_attempts
        drop constraint payment_attempts_idempotency_key,
        drop column alarmed, drop column lease_expires_at, drop column lease_token, drop column check_after,
        drop column settled_at, drop column late_success, drop column next_action_url, drop column idempotency_key, drop column processor`);
    this.addSql(`alter table payment_attempts alter column processor_reference set not null`);
    this.addSql(`alter table payment_attempts drop constraint payment_attempts_outcome_check`);
    this.addSql(`alter table payment_attempts add constraint payment_attempts_outcome_check check (outcome in ('succeeded', 'declined'))`);
    this.addSql(`alter table payment_intents drop constraint payment_intents_next_action`);
    this.addSql(`alter table payment_intents drop column next_action_url`);
    this.addSql(`alter table payment_intents drop constraint payment_intents_status_check`);
    this.addSql(`
      alter table payment_intents add constraint payment_intents_status_check
        check (status in ('pending', 'successful', 'failed', 'expired', 'cancelled'))`);
  }
}
