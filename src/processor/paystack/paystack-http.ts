import { parseRetryAfter } from "../../webhooks/retry-after.js";

/** When a 429 names no Retry-After: wait this long rather than ask again at once. */
const defaultRetryAfterMs = 30_000;

/** PaystackHttpOptions: where Paystack is and how long one call may take. */
export interface PaystackHttpOptions {
  secretKey: string;
  /** https://api.paystack.co, or a stand-in's URL in tests. */
  baseUrl: string;
  /** The longest one call may take (PROCESSOR_TIMEOUT_MS), answer included. */
  timeoutMs: number;
  fetch?: typeof globalThis.fetch;
}

/**
 * PaystackReply is what one call came to, in the three cases the adapter
 * tells apart: Paystack answered `status: true` (ok); Paystack answered and
 * refused (a 4xx other than 429, or `status: false`), so nothing happened;
 * or we cannot know (a timeout, a network error, a 5xx, a 429, an answer
 * that is not Paystack's JSON), so the caller says `unknown`.
 */
export type PaystackReply =
  | { kind: "ok"; body: { data?: unknown; meta?: unknown } }
  | { kind: "refused"; status: number; message: string }
  | { kind: "unavailable"; reason: string; retryAfterMs?: number };

/** PaystackHttp makes one authenticated JSON call to Paystack's API. */
export interface PaystackHttp {
  call(
    method: "GET" | "POST",
    path: string,
    options: { query?: Record<string, string>; body?: unknown },
    signal: AbortSignal,
  ): Promise<PaystackReply>;
}

/**
 * createPaystackHttp: calls carry `Authorization: Bearer <secret key>` and
 * nothing else of the key: a reason or message it returns names the status
 * or the network error's code, never the key, the request or the URL's query.
 * Never retries: a retry is the reconciler's, later (a 429 is never retried hot).
 */
export function createPaystackHttp(options: PaystackHttpOptions): PaystackHttp {
  const doFetch = options.fetch ?? globalThis.fetch;
  const base = options.baseUrl.replace(/\/+$/, "");
  return {
    async call(method, path, { query, body }, signal) {
      const url = new URL(base + path);
      for (const [name, value] of Object.entries(query ?? {})) url.searchParams.set(name, value);
      const deadline = AbortSignal.any([signal, AbortSignal.timeout(options.timeoutMs)]);
      let response: Response;
      let text: string;
      try {
        response = await doFetch(url, {
          method,
          headers: {
            authorization: `Bearer ${options.secretKey}`,
            accept: "application/json",
            ...(body === undefined ? {} : { "content-type": "application/json" }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: deadline,
          redirect: "error",
        });
        text = await response.text();
      } catch (error) {
        return { kind: "unavailable", reason: describeFailure(error, signal, options.timeoutMs) };
      }
      const name = `${method} ${path.split("?")[0]}`;
      if (response.status === 429) {
        const retryAfterMs = parseRetryAfter(response.headers.get("retry-after") ?? undefined, new Date()) ?? defaultRetryAfterMs;
        return { kind: "unavailable", reason: `Paystack answered 429 to ${name}`, retryAfterMs };
      }
      if (response.status >= 500) return { kind: "unavailable", reason: `Paystack answered ${response.status} to ${name}` };
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return { kind: "unavailable", reason: `Paystack's answer ${response.status} to ${name} is not JSON` };
      }
      if (typeof parsed !== "object" || parsed === null || typeof (parsed as { status?: unknown }).status !== "boolean") {
        return { kind: "unavailable", reason: `Paystack's answer ${response.status} to ${name} is not Paystack's envelope` };
      }
      const envelope = parsed as { status: boolean; message?: unknown; data?: unknown; meta?: unknown };
      if (response.status >= 200 && response.status < 300 && envelope.status) return { kind: "ok", body: envelope };
      if (response.status >= 300 && response.status < 400) return { kind: "unavailable", reason: `Paystack answered ${response.status} to ${name}` };
      const message = typeof envelope.message === "string" ? envelope.message.slice(0, 200) : `status ${response.status}`;
      return { kind: "refused", status: response.status, message };
    },
  };
}

/** describeFailure names why a call got no answer: our deadline, the caller's, or the network's error code. */
function describeFailure(error: unknown, callerSignal: AbortSignal, timeoutMs: number): string {
  if (callerSignal.aborted) return "the call to Paystack was cancelled";
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) {
    return `Paystack did not answer within ${timeoutMs} ms`;
  }
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  const code = typeof cause?.code === "string" ? cause.code : "network error";
  return `Paystack could not be reached (${code})`;
}
