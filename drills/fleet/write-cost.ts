import pg from "pg";
import type { DrillReport } from "../support/drill-report.js";
import type { Fleet } from "../support/fleet.js";

export interface WriteCostOptions {
  creates: number;
  payments: number;
  concurrency: number;
}

/** What a batch of operations wrote to PostgreSQL's WAL, counted from the WAL itself (pg_walinspect). */
interface WalCost {
  commits: number;
  bytes: number;
  /** Of bytes, full-page images (the first change of a page after a checkpoint). */
  fullPageBytes: number;
  heapInserts: number;
  heapUpdates: number;
  indexInserts: number;
  seconds: number;
}

/**
 * The WAL records of one database between two positions: every record of a
 * transaction that touched a block of the database (its commit included),
 * and records outside any transaction on its blocks. The cluster is shared
 * with other work; nothing of it is counted.
 */
const walCostText = `
  with r as (select * from pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)),
       ours as (select distinct xid from r where xid <> 0 and block_ref like $3)
  select count(*) filter (where resource_manager = 'Transaction' and record_type like 'COMMIT%') as commits,
         coalesce(sum(record_length), 0) as bytes,
         coalesce(sum(fpi_length), 0) as fpi,
         count(*) filter (where resource_manager = 'Heap' and record_type like 'INSERT%') as heap_inserts,
         count(*) filter (where resource_manager in ('Heap', 'Heap2') and record_type like '%UPDATE%') as heap_updates,
         count(*) filter (where resource_manager = 'Btree' and record_type like 'INSERT%') as index_inserts
  from r
  where (xid <> 0 and xid in (select xid from ours)) or (xid = 0 and block_ref like $3)`;

/**
 * runWriteCost measures what one create and one payment cost PostgreSQL, for
 * docs/SCALING.md: creates (two payment methods and a split each) and card
 * payments at checkout through HAProxy, each batch's WAL read back with
 * pg_walinspect and attributed to the fleet's database. The rates are this
 * machine's (2 cores shared by everything), not PostgreSQL's ceiling.
 */
export async function runWriteCost(fleet: Fleet, options: WriteCostOptions): Promise<DrillReport> {
  const admin = new pg.Client({ connectionString: fleet.db.url });
  await admin.connect();
  try {
    await admin.query("create extension if not exists pg_walinspect");
    const oid = (await admin.query<{ oid: number }>("select oid from pg_database where datname = current_database()")).rows[0]!.oid;
    const measure = async (work: () => Promise<void>): Promise<WalCost> => {
      const from = (await admin.query<{ lsn: string }>("select pg_current_wal_insert_lsn()::text as lsn")).rows[0]!.lsn;
      const started = performance.now();
      await work();
      const seconds = (performance.now() - started) / 1000;
      // Records are readable up to what is flushed: every commit of the batch is.
      const to = (await admin.query<{ lsn: string }>("select pg_current_wal_flush_lsn()::text as lsn")).rows[0]!.lsn;
      const row = (await admin.query<Record<string, string>>(walCostText, [from, to, `% rel %/${oid}/%`])).rows[0]!;
      return {
        commits: Number(row.commits),
        bytes: Number(row.bytes),
        fullPageBytes: Number(row.fpi),
        heapInserts: Number(row.heap_inserts),
        heapUpdates: Number(row.heap_updates),
        indexInserts: Number(row.index_inserts),
        seconds,
      };
    };

    const rest = `${fleet.haproxy.httpUrl}/v1`;
    const auth = { authorization: `Bearer ${fleet.merchant.key}` };
    const account = (await (
      await fetch(`${rest}/v2/settlement-accounts`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ accountName: "Cost Shop", accountNumber: "0987654321", bankName: "Bank", bankCode: "058" }),
      })
    ).json()) as { id: string };
    const links: string[] = [];
    const prefix = `cost-${Date.now()}`;
    const creates = await measure(() =>
      inParallel(options.creates, options.concurrency, async (i) => {
        const res = await fetch(`${rest}/v2/payment-intents`, {
          method: "POST",
          headers: { ...auth, "content-type": "application/json" },
          body: JSON.stringify({
            amount: 50_000,
            customerEmail: "ada@example.com",
            clientReference: `${prefix}-${i}`,
            paymentMethod: ["card", "bank_transfer"],
            settlementAccounts: [{ settlementAccountId: account.id, splitAmount: 45_000 }],
          }),
        });
        const body = (await res.json()) as { checkoutLink?: string };
        if (res.status !== 201 || !body.checkoutLink) throw new Error(`create answered ${res.status}: ${JSON.stringify(body)}`);
        links.push(body.checkoutLink);
      }),
    );
    const payments = await measure(() => inParallel(options.payments, options.concurrency, (i) => payByCard(links[i]!)));
    const per = (cost: WalCost, n: number) =>
      `${(cost.commits / n).toFixed(2)} commits, ${Math.round(cost.bytes / n)} bytes of WAL (${Math.round(cost.fullPageBytes / n)} of them full-page images), ${(cost.heapInserts / n).toFixed(2)} row inserts, ${(cost.heapUpdates / n).toFixed(2)} row updates, ${(cost.indexInserts / n).toFixed(2)} index entries; ${(n / cost.seconds).toFixed(0)}/s through the fleet here`;
    return {
      name: "Fleet: what a write costs PostgreSQL",
      did: `${options.creates} creates (two payment methods and a split each) and ${options.payments} card payments at checkout (page and form post), ${options.concurrency} at a time through HAProxy; the WAL of each batch read back with pg_walinspect and attributed to the fleet's database`,
      headline: `per create ${Math.round(creates.bytes / options.creates)} bytes of WAL in ${(creates.commits / options.creates).toFixed(2)} commits; per payment ${Math.round(payments.bytes / options.payments)} bytes in ${(payments.commits / options.payments).toFixed(2)} commits`,
      figures: [`per create: ${per(creates, options.creates)}`, `per payment: ${per(payments, options.payments)}`],
      passed: creates.commits > 0 && payments.commits > 0,
    };
  } finally {
    await admin.end();
  }
}

/** Runs work(0…count-1), at most `concurrency` at once. */
async function inParallel(count: number, concurrency: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

/** Opens the checkout page as a browser would and pays with the test card that succeeds. */
async function payByCard(checkoutLink: string): Promise<void> {
  const page = await fetch(checkoutLink, { redirect: "manual" });
  const html = await page.text();
  const cookie = (page.headers.get("set-cookie") ?? "").split(";")[0]!;
  const csrf = /<input type="hidden" name="csrf" value="([^"]*)"/.exec(html)?.[1];
  if (page.status !== 200 || !csrf) throw new Error(`checkout page answered ${page.status}`);
  const paid = await fetch(`${checkoutLink}/pay`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    body: new URLSearchParams({ csrf, method: "card", card_number: "4084 0840 8408 4081", card_expiry: "12/39", card_cvv: "123" }).toString(),
  });
  await paid.arrayBuffer();
  if (paid.status !== 303 && paid.status !== 200) throw new Error(`payment answered ${paid.status}`);
}
