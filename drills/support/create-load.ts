/** One request of a load: when it started and ended (ms from the load's start), and what came back. */
export interface LoadSample {
  worker: number;
  start: number;
  end: number;
  /** The HTTP status; 0 when no answer came (the error says why). */
  status: number;
  body: string;
  /** The create's clientReference. */
  reference: string;
  error?: string;
}

export interface CreateLoad {
  readonly samples: LoadSample[];
  /** performance.now() when the load began: samples count from it. */
  readonly startedAt: number;
  /** ms since the load began. */
  now(): number;
  /** Stops sending and waits for the requests in flight. */
  stop(): Promise<void>;
}

export interface CreateLoadOptions {
  /** REST root of the balancer, e.g. http://127.0.0.1:8080/v1 */
  restUrl: string;
  key: string;
  /** Requests in flight at once. */
  concurrency: number;
  /** Start of every clientReference, unique per load. */
  prefix: string;
  /** A client gives up on a request after this long (default 15 s). */
  timeoutMs?: number;
}

/**
 * startCreateLoad keeps `concurrency` creates in flight through the balancer,
 * each with a clientReference of its own, and records every answer, so a
 * drill can tell what was acknowledged, what failed and when. A worker that
 * got an error waits 20 ms before its next request, as a polite client does.
 */
export function startCreateLoad(options: CreateLoadOptions): CreateLoad {
  const startedAt = performance.now();
  const now = () => performance.now() - startedAt;
  const samples: LoadSample[] = [];
  let running = true;
  let counter = 0;
  const worker = async (index: number) => {
    while (running) {
      const reference = `${options.prefix}-${++counter}`;
      const start = now();
      try {
        const res = await fetch(`${options.restUrl}/v2/payment-intents`, {
          method: "POST",
          headers: { authorization: `Bearer ${options.key}`, "content-type": "application/json" },
          body: JSON.stringify({ amount: 5000, customerEmail: "ada@example.com", clientReference: reference, paymentMethod: ["card"] }),
          signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
        });
        const body = await res.text();
        samples.push({ worker: index, start, end: now(), status: res.status, body, reference });
        if (res.status >= 300) await sleep(20);
      } catch (error) {
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        samples.push({ worker: index, start, end: now(), status: 0, body: "", reference, error: cause?.code ?? cause?.message ?? String(error) });
        await sleep(20);
      }
    }
  };
  const workers = Array.from({ length: options.concurrency }, (_, i) => worker(i));
  return {
    samples,
    startedAt,
    now,
    async stop() {
      running = false;
      await Promise.all(workers);
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * isErrorBody says whether body is exactly the API's error shape for status:
 * {status, title, message} with status equal to the HTTP status. HAProxy's
 * own errors (deploy/haproxy.cfg) have the same shape.
 */
export function isErrorBody(status: number, body: string): boolean {
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    return (
      Object.keys(parsed).sort().join() === "message,status,title" &&
      parsed.status === status &&
      typeof parsed.title === "string" &&
      typeof parsed.message === "string"
    );
  } catch {
    return false;
  }
}

/** Counts samples by status ("no answer" for 0), e.g. "201×480, 503×12". */
export function statusCounts(samples: readonly { status: number; error?: string }[]): string {
  const counts = new Map<string, number>();
  for (const s of samples) {
    const label = s.status === 0 ? `no answer (${s.error})` : String(s.status);
    counts.set(label, (counts.get(label) ?? 0) + 1);
  }
  return [...counts.entries()]
    .sort()
    .map(([status, n]) => `${status}×${n}`)
    .join(", ");
}

/** The messages of error answers, counted: what a client was told. */
export function errorMessages(samples: readonly LoadSample[]): string {
  const counts = new Map<string, number>();
  for (const s of samples.filter((x) => x.status >= 300)) {
    let message = s.body.slice(0, 80);
    try {
      message = (JSON.parse(s.body) as { message: string }).message;
    } catch {
      // Not JSON: shown as it came.
    }
    const label = `${s.status} "${message}"`;
    counts.set(label, (counts.get(label) ?? 0) + 1);
  }
  return [...counts.entries()].map(([label, n]) => `${label} ×${n}`).join("; ") || "none";
}
