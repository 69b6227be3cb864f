import { Migration } from "@mikro-orm/migrations";

/**
 * Test and live modes (issue 23, §1): every object a key creates carries
 * the key's mode in `livemode`. Rows written before carry their merchant's
 * mode as its keys tell it: a merchant whose active keys all start with
 * `sk_live_` (what `npm run keys` made) had live objects, every other
 * merchant test ones, the same rule by which its keys keep working.
 *
 * What is unique per merchant becomes unique per merchant and mode (an
 * intent's clientReference, a registered bank account), so the two modes
 * never collide, and the list indexes lead with the mode, so a page of one
 * mode never reads past the other's rows.
 */
const tables = ["payment_intents", "settlement_accounts", "refunds", "events", "webhook_endpoints"] as const;

const liveMerchants = `select merchant_id from api_keys where revoked_at is null
  group by merchant_id having bool_and(key_prefix like 'sk\\_live\\_%')`;

export class Migration20261126140000_modes extends Migration {
  override name = "Migration20261126140000_modes";

  override up(): void {
    for (const table of tables) {
      this.addSql(`alter table ${table} add column livemode boolean not null default false`);
      this.addSql(`update ${table} set livemode = true where merchant_id in (${liveMerchants})`);
    }
    this.addSql(`alter table payment_intents drop constraint payment_intents_merchant_reference_key`);
    this.addSql(`alter table payment_intents add constraint payment_intents_merchant_reference_key unique (merchant_id, livemode, client_reference)`);
    this.addSql(`drop index payment_intents_merchant_created_idx`);
    this.addSql(`create index payment_intents_merchant_created_idx on payment_intents (merchant_id, livemode, created_at desc, id desc)`);

    this.addSql(`alter table settlement_accounts drop constraint settlement_accounts_merchant_bank_account_key`);
    this.addSql(
      `alter table settlement_accounts add constraint settlement_accounts_merchant_bank_account_key unique (merchant_id, livemode, bank_code, account_number)`,
    );
    this.addSql(`drop index settlement_accounts_merchant_created_idx`);
    this.addSql(`create index settlement_accounts_merchant_created_idx on settlement_accounts (merchant_id, livemode, created_at desc, id desc)`);

    this.addSql(`drop index events_merchant_created_idx`);
    this.addSql(`create index events_merchant_created_idx on events (merchant_id, livemode, created_at desc, id desc)`);
  }

  /** Back to one mode: the column goes, and with it what is unique per mode (which fails if both modes used one value). */
  override down(): void {
    this.addSql(`drop index events_merchant_created_idx`);
    this.addSql(`create index events_merchant_created_idx on events (merchant_id, created_at desc, id desc)`);
    this.addSql(`drop index settlement_accounts_merchant_created_idx`);
    this.addSql(`create index settlement_accounts_merchant_created_idx on settlement_accounts (merchant_id, created_at desc, id desc)`);
    this.addSql(`alter table settlement_accounts drop constraint settlement_accounts_merchant_bank_account_key`);
    this.addSql(`alter table settlement_accounts add constraint settlement_accounts_merchant_bank_account_key unique (merchant_id, bank_code, account_number)`);
    this.addSql(`drop index payment_intents_merchant_created_idx`);
    this.addSql(`create index payment_intents_merchant_created_idx on payment_intents (merchant_id, created_at desc, id desc)`);
    this.addSql(`alter table payment_intents drop constraint payment_intents_merchant_reference_key`);
    this.addSql(`alter table payment_intents add constraint payment_intents_merchant_reference_key unique (merchant_id, client_reference)`);
    for (const table of tables) this.addSql(`alter table ${table} drop column livemode`);
  }
}
