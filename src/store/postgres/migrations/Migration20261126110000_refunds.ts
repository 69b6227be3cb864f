import { Migration } from "@mikro-orm/migrations";

/**
 * Refunds (README, Refunds). An intent's amount_refunded is what its
 * merchant refunds pending or successful add up to, kept in the same
 * transactions as the refunds, and a check keeps it within what was paid, so
 * no interleaving of concurrent refunds can pass it. A merchant's
 * client_reference is unique forever; an attempt has at most one automatic
 * refund (a late or duplicate payment given back), which has no reference.
 *
 * events.type's check takes the refund events, and the lifecycle's
 * payment_intent.processing and .requires_action (which the attempt
 * lifecycle's migration, after this one, starts recording): whatever check
 * on the type stands is replaced.
 */
export class Migration20261126110000_refunds extends Migration {
  override name = "Migration20261126110000_refunds";

  override up(): void {
    this.addSql(`alter table payment_intents add column amount_refunded bigint not null default 0`);
    this.addSql(
      `alter table payment_intents add constraint payment_intents_amount_refunded check (amount_refunded >= 0 and amount_refunded <= amount)`,
    );

    this.addSql(`
      create table refunds (
        merchant_id text not null,
        id text not null,
        payment_intent_id text not null,
        attempt_id text not null,
        amount bigint not null check (amount > 0),
        status text not null check (status in ('pending', 'successful', 'failed')),
        reason text not null check (reason in ('requested_by_customer', 'duplicate', 'fraudulent', 'payment_after_close', 'duplicate_payment')),
        client_reference text,
        request_fingerprint text,
        failure_reason text,
        processor text not null,
        processor_reference text,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        check_after timestamptz,
        lease_token text,
        lease_expires_at timestamptz,
        primary key (merchant_id, id),
        constraint refunds_intent_fkey foreign key (merchant_id, payment_intent_id)
          references payment_intents (merchant_id, id) on delete cascade,
        constraint refunds_client_reference_key unique (merchant_id, client_reference),
        constraint refunds_reference_unless_automatic
          check ((reason in ('payment_after_close', 'duplicate_payment')) = (client_reference is null)),
        constraint refunds_fingerprint_with_reference check ((client_reference is null) = (request_fingerprint is null)),
        constraint refunds_failure_reason check ((status = 'failed') = (failure_reason is not null)),
        constraint refunds_check_after check ((status = 'pending') = (check_after is not null))
      )`);
    this.addSql(`create unique index refunds_automatic_key on refunds (merchant_id, attempt_id) where client_reference is null`);
    // A processor's notice names the refund by id alone (our idempotency key).
    this.addSql(`create unique index refunds_id_key on refunds (id)`);
    // ListRefunds: one intent's, newest first.
    this.addSql(`create index refunds_intent_created_idx on refunds (merchant_id, payment_intent_id, created_at desc, id desc)`);
    // The reconciler's claim: pending refunds, earliest check first.
    this.addSql(`create index refunds_due_idx on refunds (check_after) where status = 'pending'`);

    this.addSql(`
      do $$
      declare c record;
      begin
        for c in select conname from pg_constraint
                 where conrelid = 'events'::regclass and contype = 'c' and pg_get_constraintdef(oid) ~ '\\mtype\\M'
        loop
          execute format('alter table events drop constraint %I', c.conname);
        end loop;
      end $$`);
    this.addSql(`
      alter table events add constraint events_type_check check (type in ('payment_intent.created', 'payment_intent.succeeded',
        'payment_intent.payment_failed', 'payment_intent.failed', 'payment_intent.expired', 'payment_intent.cancelled',
        'payment_intent.processing', 'payment_intent.requires_action', 'refund.created', 'refund.succeeded', 'refund.failed'))`);
  }

  override down(): void {
    this.addSql(`alter table events drop constraint events_type_check`);
    this.addSql(`delete from webhook_deliveries d using events e where d.merchant_id = e.merchant_id and d.event_id = e.id and e.type like 'refund.%'`);
    this.addSql(`delete from events where type like 'refund.%'`);
    this.addSql(`
      alter table events add constraint events_type_check check (type in ('payment_intent.created', 'payment_intent.succeeded',
        'payment_intent.payment_failed', 'payment_intent.failed', 'payment_intent.expired', 'payment_intent.cancelled',
        'payment_intent.processing', 'payment_intent.requires_action'))`);
    this.addSql(`drop table refunds`);
    this.addSql(`alter table payment_intents drop constraint payment_intents_amount_refunded`);
    this.addSql(`alter table payment_intents drop column amount_refunded`);
  }
}
