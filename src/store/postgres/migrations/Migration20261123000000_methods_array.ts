import { Migration } from "@mikro-orm/migrations";

/**
 * Payment methods move into payment_intents as a text[] column, so a create
 * writes one intent row (plus its splits) and a list reads one row per item.
 * The guarantees of the old child table stay, as a check: 0–10 methods (its
 * positions 0–9), each a catalogue-shaped name, none twice, none null.
 * Splits keep their table: their composite foreign keys to the merchant's
 * settlement accounts cannot be expressed on an array.
 */
export class Migration20261123000000_methods_array extends Migration {
  override name = "Migration20261123000000_methods_array";

  override up(): void {
    // A function, because a check constraint may not hold a subquery. It is
    // immutable: it reads nothing but its argument.
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
    this.addSql(`alter table payment_intents add column payment_methods text[]`);
    this.addSql(`
      update payment_intents pi
         set payment_methods = coalesce(
           (select array_agg(m.method order by m.position) from payment_intent_methods m where m.payment_intent_id = pi.id),
           '{}')`);
    this.addSql(`alter table payment_intents alter column payment_methods set not null`);
    this.addSql(
      `alter table payment_intents add constraint payment_intents_payment_methods_check
         check (payment_methods_are_valid(payment_methods))`,
    );
    this.addSql(`drop table payment_intent_methods`);
  }

  override down(): void {
    this.addSql(`
      create table payment_intent_methods (
        payment_intent_id text not null references payment_intents (id) on delete cascade,
        position smallint not null check (position between 0 and 9),
        method text not null check (method ~ '^[a-z][a-z0-9_]{0,31}$'),
        primary key (payment_intent_id, position),
        constraint payment_intent_methods_method_key unique (payment_intent_id, method)
      )`);
    this.addSql(`
      insert into payment_intent_methods (payment_intent_id, position, method)
      select pi.id, m.n - 1, m.method
      from payment_intents pi cross join unnest(pi.payment_methods) with ordinality as m (method, n)`);
    this.addSql(`alter table payment_intents drop column payment_methods`);
    this.addSql(`drop function payment_methods_are_valid(text[])`);
  }
}
