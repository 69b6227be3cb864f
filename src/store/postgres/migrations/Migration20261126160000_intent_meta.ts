import { Migration } from "@mikro-orm/migrations";

/**
 * A merchant's own data on intents and refunds (the contract's `meta`,
 * docs/api.md "Meta"). Reads take payment_intents.meta and refunds.meta, the
 * entries in their order. The list filter meta[name]=value reads
 * payment_intent_meta, one row per entry, through an index that starts with
 * the merchant, then name and value, in the list's order: a filtered page is
 * one ordered range scan that stops at the page's end, whatever another
 * merchant's data looks like. (A GIN index on the jsonb column with
 * jsonb_path_ops was measured first: the planner, misled by a value common
 * in another merchant's rows, walked a whole merchant's intents instead,
 * 1.75 s at a million rows against 0.04 ms here; docs/BENCHMARKS.md.)
 * Entries never change after create, so the side rows are written once, in
 * the create's statement, and created_at there is the intent's.
 */
export class Migration20261126160000_intent_meta extends Migration {
  override name = "Migration20261126160000_intent_meta";

  override up(): void {
    this.addSql(`alter table payment_intents add column meta jsonb not null default '[]'`);
    this.addSql(`alter table refunds add column meta jsonb not null default '[]'`);
    this.addSql(`
      create table payment_intent_meta (
        merchant_id text not null,
        payment_intent_id text not null,
        name text not null check (char_length(name) between 1 and 40),
        value text not null check (char_length(value) between 1 and 500),
        created_at timestamptz not null,
        primary key (merchant_id, payment_intent_id, name),
        constraint payment_intent_meta_intent_fkey foreign key (merchant_id, payment_intent_id)
          references payment_intents (merchant_id, id) on delete cascade
      )`);
    this.addSql(
      `create index payment_intent_meta_filter_idx on payment_intent_meta (merchant_id, name, value, created_at desc, payment_intent_id desc)`,
    );
  }

  override down(): void {
    this.addSql(`drop table payment_intent_meta`);
    this.addSql(`alter table refunds drop column meta`);
    this.addSql(`alter table payment_intents drop column meta`);
  }
}
