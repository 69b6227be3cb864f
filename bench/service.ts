import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { startBenchProcess, type BenchProcess } from "./support/bench-process.js";

/** The merchants every bench server knows, with fresh random keys per run. */
export const merchants = {
  /** Creates go here. */
  load: { id: "bench_load", key: `sk_bench_${randomBytes(18).toString("base64url")}` },
  /** Seeded for the list scenarios. */
  list: { id: "bench_list", key: `sk_bench_${randomBytes(18).toString("base64url")}` },
  /** Seeded with 10 thousand intents, for the scale figures. */
  scaleSmall: { id: "bench_scale_small", key: `sk_bench_${randomBytes(18).toString("base64url")}` },
  /** Seeded with 1 million intents, for the scale figures. */
  scaleLarge: { id: "bench_scale_large", key: `sk_bench_${randomBytes(18).toString("base64url")}` },
} as const;

/** Shared by every server of a run, so the bench can mint a deep page token itself. */
export const pageTokenSecret = randomBytes(32).toString("base64url");

/**
 * RATE_LIMIT_RPS=0 turns the per-key rate limiter off: with its default
 * limits (100 requests/s per key) a load test would measure the limiter.
 * Everything else runs as operators run it, request logs included.
 */
export const unthrottledEnv: Record<string, string> = { RATE_LIMIT_RPS: "0", AUTH_FAILURES_PER_MINUTE: "0" };

export interface ServiceOptions {
  /** Unset: the in-memory stores. */
  databaseUrl?: string;
  /** Where --cpu-prof writes the server's profiles (in a directory named profileName); unset: no profile. */
  profileDir?: string;
  profileName?: string;
  /** More environment, e.g. LOG_LEVEL for a comparison run. */
  extraEnv?: Record<string, string>;
  /** The file its stderr (the request log) is appended to. */
  logPath: string;
  /** The checkout to run (default this one). */
  root?: string;
  /** Run dist/src/main.js (npm run build first), as the image does, instead of src/main.ts under tsx. */
  built?: boolean;
}

/**
 * startService runs src/main.ts as its own process on a free port, the way
 * operators run it, with the bench merchants' keys; its request log (stderr)
 * goes to a file, as an operator's log shipper would take it.
 */
export function startService(options: ServiceOptions): Promise<BenchProcess> {
  // One directory per server: the tsx loader thread writes a profile of its own beside the main thread's.
  const nodeArgs = options.profileDir
    ? ["--cpu-prof", `--cpu-prof-dir=${join(options.profileDir, options.profileName ?? "service")}`]
    : [];
  return startBenchProcess({
    script: options.built ? join("dist", "src", "main.js") : join("src", "main.ts"),
    nodeArgs,
    logPath: options.logPath,
    root: options.root,
    env: {
      ...unthrottledEnv,
      API_KEYS: Object.values(merchants)
        .map((m) => `${m.id}:${m.key}`)
        .join(","),
      PAGE_TOKEN_SECRET: pageTokenSecret,
      DATABASE_URL: options.databaseUrl,
      DB_POOL_MAX: "10",
      MIGRATE_ON_START: "true",
      ...options.extraEnv,
    },
  });
}

/** The REST create body; {{unique}} becomes a per-request clientReference suffix. */
export const restCreateBody =
  '{"amount":50000,"customerEmail":"ada@example.com","clientReference":"ref-{{unique}}","paymentMethod":["card","bank_transfer"],"callbackUrl":"https://shop.example.com/paid"}';

/** The same request as Connect JSON (int64 as a string, proto3 JSON). */
export const connectCreateBody =
  '{"amount":"50000","customerEmail":"ada@example.com","clientReference":"ref-{{unique}}","paymentMethod":["card","bank_transfer"],"callbackUrl":"https://shop.example.com/paid"}';

/** seedIntents creates count intents for a merchant through the REST API, a few at a time. */
export async function seedIntents(baseUrl: string, key: string, count: number, prefix: string): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const res = await fetch(`${baseUrl}/v1/v2/payment-intents`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: restCreateBody.replace("{{unique}}", `${prefix}-${i}`),
        signal: AbortSignal.timeout(10_000),
      });
      await res.arrayBuffer();
      if (res.status !== 201) throw new Error(`seeding: HTTP ${res.status}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}
