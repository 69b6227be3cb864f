import pg from "pg";
import { createPageTokenCodec } from "../src/service/page-token.js";
import { extraIntentColumns } from "./support/intent-columns.js";
import { percentile } from "./support/load-result.js";

/** One list latency figure at one table size. */
export interface ScalePoint {
  intents: number;
  page: "first" | "deep";
  /** Position of the page's cursor, for the deep page. */
  position: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  seedSeconds: number;
}

export interface ListScaleOptions {
  databaseUrl: string;
  /** The running PostgreSQL server's URL. */
  serviceUrl: string;
  /** One merchant per size, known to the server. */
  merchants: { id: string; key: string }[];
  pageTokenSecret: string;
  /** Intents per merchant, one merchant each. */
  sizes: number[];
  /** Requests per figure, sequential and in turns across figures (after a warm-up of a tenth as many). */
  requests: number;
  log(line: string): void;
}

/** Rows per INSERT…SELECT, so no one statement runs for minutes. */
const seedBatch = 250_000;

/**
 * seedRange inserts intents g = from..to for the merchant with one
 * INSERT…SELECT over generate_series per batch, each with its two payment
 * methods, satisfying the migration's checks. Intent g was created g seconds
 * before 2026-01-01, so a larger g is older: growing the table adds history
 * behind the first page.
 */
async function seedRange(client: pg.Client, merchantId: string, from: number, to: number): Promise<void> {
  const extras = await extraIntentColumns(client);
  const extraNames = extras.map((c) => `, ${c.name}`).join("");
  const extraValues = extras.map((c) => `, ${c.value}`).join("");
  for (let start = from; start <= to; start += seedBatch) {
    const end = Math.min(to, start + seedBatch - 1);
    await client.query(
      `insert into payment_intents (
         id, merchant_id, amount, total_amount, currency, country, customer_email, receipt_email,
         status, client_reference, callback_url, transaction, checkout_token, request_fingerprint,
         created_at, updated_at, deleted_at${extraNames})
       select
         'pi_seed_' || $1 || '_' || lpad(g::text, 8, '0'), $1,
         1000 + g, 1000 + g, 'NGN', 'NG', 'ada@example.com', 'ada@example.com',
         'pending', 'seed-' || g, 'https://shop.example.com/paid', null,
         $1 || '-seed-token-' || g, md5($1 || g) || md5(g || $1),
         timestamptz '2026-01-01 00:00:00Z' - g * interval '1 second',
         timestamptz '2026-01-01 00:00:00Z' - g * interval '1 second',
         null${extraValues}
       from generate_series($2::int, $3::int) as g`,
      [merchantId, start, end],
    );
  }
}

/** timeList sends one GET of a list URL and returns its latency in ms. */
async function timeList(url: string, apiKey: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(url, { headers: { authorization: `Bearer ${apiKey}` }, signal: AbortSignal.timeout(10_000) });
  const body = (await res.json()) as { paymentIntents?: unknown[] };
  const ms = performance.now() - started;
  if (res.status !== 200 || body.paymentIntents?.length !== 50) {
    throw new Error(`list: HTTP ${res.status}, ${body.paymentIntents?.length} items`);
  }
  return ms;
}

/**
 * runListScale measures REST list latency (a page of 50) on PostgreSQL for
 * merchants of each size, all in one table: the first page, and a page three
 * quarters of the way down the keyset (its page token minted with the
 * servers' secret, as a client that paged that far would hold it). Seeding
 * comes first, then the sizes are timed in turns, request by request, so a
 * busy moment of a shared machine (or of the database after a bulk load)
 * weighs on every size alike.
 */
export async function runListScale(options: ListScaleOptions): Promise<ScalePoint[]> {
  const client = new pg.Client({ connectionString: options.databaseUrl });
  await client.connect();
  const codec = createPageTokenCodec(options.pageTokenSecret);
  try {
    const sized: { size: number; merchantId: string; apiKey: string; seedSeconds: number }[] = [];
    for (const [i, size] of options.sizes.entries()) {
      const merchant = options.merchants[i]!;
      const started = performance.now();
      await seedRange(client, merchant.id, 1, size);
      const seedSeconds = (performance.now() - started) / 1000;
      options.log(`seeded ${size.toLocaleString("en")} intents for ${merchant.id} in ${seedSeconds.toFixed(1)} s`);
      sized.push({ size, merchantId: merchant.id, apiKey: merchant.key, seedSeconds });
    }
    await client.query("vacuum analyze payment_intents");
    await client.query("checkpoint");

    const listUrl = `${options.serviceUrl}/v1/v2/payment-intents?pageSize=50`;
    const targets: { point: Omit<ScalePoint, "p50Ms" | "p99Ms">; url: string; apiKey: string; times: number[] }[] = [];
    for (const { size, merchantId, apiKey, seedSeconds } of sized) {
      targets.push({ point: { intents: size, page: "first", position: 0, requests: options.requests, seedSeconds }, url: listUrl, apiKey, times: [] });
      // The bench may use OFFSET to find the cursor; the service never does.
      const position = Math.floor(size * 0.75);
      const { rows } = await client.query<{ created_at: Date; id: string }>(
        `select created_at, id from payment_intents where merchant_id = $1 and deleted_at is null
         order by created_at desc, id desc offset $2 limit 1`,
        [merchantId, position - 1],
      );
      const token = codec.encode({ createdAt: rows[0]!.created_at, id: rows[0]!.id }, { merchantId, query: ["payment_intents", "test", "", ""] });
      targets.push({
        point: { intents: size, page: "deep", position, requests: options.requests, seedSeconds },
        url: `${listUrl}&pageToken=${encodeURIComponent(token)}`,
        apiKey,
        times: [],
      });
    }
    const warmup = Math.max(5, Math.ceil(options.requests / 10));
    for (let i = 0; i < warmup + options.requests; i++) {
      for (const target of targets) {
        const ms = await timeList(target.url, target.apiKey);
        if (i >= warmup) target.times.push(ms);
      }
    }
    return targets.map(({ point, times }) => {
      times.sort((a, b) => a - b);
      return { ...point, p50Ms: percentile(times, 50), p99Ms: percentile(times, 99) };
    });
  } finally {
    await client.end();
  }
}
