import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSystemClock } from "../../src/lib/clock.js";
import { createIdGenerator } from "../../src/lib/ids.js";
import type { PostgresStores } from "../../src/store/postgres/open-postgres-stores.js";
import { createTestDatabase, openMigratedStores, postgresUnavailable, queryDatabase, type TestDatabase } from "../support/postgres.js";
import { createLiveIntents } from "./support/live-intents.js";

const skip = await postgresUnavailable();

const clock = createSystemClock();
const ids = createIdGenerator(clock);
const liveIntent = createLiveIntents(clock, ids);

/**
 * payment_intents.payment_methods' check (Migration20261126170000_methods_check):
 * one plain expression over the array's text form, no SQL function.
 */
describe("PostgreSQL payment_methods check", { skip }, () => {
  let db: TestDatabase;
  let stores: PostgresStores;
  let intentId: string;

  /** Writes methods (an array literal) to the stored intent: the SQLSTATE of the refusal, or "ok". */
  const write = async (methods: string) =>
    queryDatabase(db.url, "update payment_intents set payment_methods = $1::text[] where id = $2", [methods, intentId]).then(
      () => "ok",
      (error: { code?: string; constraint?: string }) => `${error.code} ${error.constraint}`,
    );

  before(async () => {
    db = await createTestDatabase();
    stores = await openMigratedStores(db.url, { poolMax: 2, clock });
    await stores.apiKeys.ensureMerchant("merchantA", "A");
    const intent = liveIntent({ merchantId: "merchantA", clientReference: "methods-1", paymentMethods: ["card"] });
    assert.equal((await stores.intents.insert(intent)).inserted, true);
    intentId = intent.id;
  });

  after(async () => {
    await stores?.close();
    await db?.drop();
  });

  const refused = "23514 payment_intents_payment_methods_check";
  const cases: [string, string, string][] = [
    ["{}", "ok", "none (every enabled method)"],
    ["{card}", "ok", "one name"],
    ["{card,bank_transfer,ussd,paystack,a1_b2}", "ok", "names of a-z, 0-9 and _, starting with a letter"],
    ["{a,b,c,d,e,f,g,h,i,j}", "ok", "ten names"],
    ["{a,b,c,d,e,f,g,h,i,j,k}", refused, "eleven names"],
    ["{card,NULL}", refused, "a NULL element"],
    ["{NULL}", refused, "only a NULL element"],
    ['{""}', refused, "an empty name"],
    ["{Card}", refused, "an upper-case letter"],
    ["{1card}", refused, "a leading digit"],
    ['{"a,b"}', refused, "a comma inside a name"],
    ['{"a b"}', refused, "a space inside a name"],
    ["{{card},{ussd}}", refused, "two dimensions"],
    ["[2:3]={card,ussd}", refused, "bounds other than the default"],
  ];
  for (const [methods, expected, what] of cases) {
    it(`${expected === "ok" ? "takes" : "refuses"} ${what}: ${methods}`, async () => {
      assert.equal(await write(methods), expected);
    });
  }

  it("calls no SQL function: payment_methods_are_valid is gone and the check is a plain expression", async () => {
    const { rows } = await queryDatabase<{ functions: string; definition: string }>(
      db.url,
      `select (select count(*) from pg_proc where proname = 'payment_methods_are_valid')::text as functions,
              (select pg_get_constraintdef(oid) from pg_constraint where conname = 'payment_intents_payment_methods_check') as definition`,
    );
    assert.equal(rows[0]!.functions, "0");
    assert.match(rows[0]!.definition, /^CHECK \(\(\(cardinality\(payment_methods\) <= 10\) AND \(\(payment_methods\)::text ~ /);
  });
});
