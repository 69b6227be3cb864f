import { Migration } from "@mikro-orm/migrations";

/**
 * payment_intents.payment_methods is checked by one plain expression instead
 * of payment_methods_are_valid(), a SQL function with a subquery that
 * PostgreSQL planned and ran on every insert (issue 24: about a tenth of a
 * create's statement time, pg_stat_statements' line for the function in
 * docs/BENCHMARKS.md). The array's text form, as array_out writes it, says it
 * all at once: one dimension with default bounds (`{…}`, not `[2:3]={…}` or
 * `{{…}}`), no NULL element (written `NULL`), no empty or quoted element,
 * each a lowercase name `[a-z][a-z0-9_]*`; cardinality bounds the count.
 * Unbounded regex quantifiers on purpose: PostgreSQL's regex engine pays for
 * a bounded one (`{0,31}`) about ten times over.
 *
 * Two rules move from the database to the service alone, which already
 * enforces them on every transport before a create reaches the store (the
 * proto's rules on CreatePaymentIntentRequest.payment_method: unique, each
 * a payment_method_name of at most 32 characters): no name twice, and the
 * length of each name. In the database the one left costs a backreference
 * regex or a subquery, each several times the whole check above.
 */
export class Migration20261126170000_methods_check extends Migration {
  override name = "Migration20261126170000_methods_check";

  override up(): void {
    this.addSql(`alter table payment_intents drop constraint payment_intents_payment_methods_check`);
    this.addSql(`
      alter table payment_intents add constraint payment_intents_payment_methods_check
        check (cardinality(payment_methods) <= 10 and payment_methods::text ~ '^[{]([a-z][a-z0-9_]*(,[a-z][a-z0-9_]*)*)?[}]$')`);
    this.addSql(`drop function payment_methods_are_valid(text[])`);
  }

  override down(): void {
    this.addSql(`
      create function payment_methods_are_valid(methods text[]) returns boolean
      language sql immutable strict parallel safe
      as $$
        select coalesce(array_ndims(methods), 1) = 1
           and cardinality(methods) <= 10
           and (select coalesce(bool_and(m is not null and m ~ '^[a-z][a-z0-9_]{0,31}$'), true)
                   and count(distinct m) = count(*)
                from unnest(methods) as m)
      $$`);
    this.addSql(`alter table payment_intents drop constraint payment_intents_payment_methods_check`);
    this.addSql(
      `alter table payment_intents add constraint payment_intents_payment_methods_check
         check (payment_methods_are_valid(payment_methods))`,
    );
  }
}
