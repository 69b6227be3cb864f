import { isIP } from "node:net";
import { createEndpointPools, type EndpointPools } from "./endpoint-pools.js";
import type { Clock } from "../lib/clock.js";
import { createSystemClock } from "../lib/clock.js";
import { bareHost, describeAddressClass, firstRefusedAddress, notPublicMessage } from "./endpoint-url.js";
import { systemResolver, type HostResolver, type ResolvedAddress } from "./host-resolver.js";
import { parseRetryAfter } from "./retry-after.js";

/**
 * SendOutcome classifies one attempt:
 * - "success": a 2xx answer;
 * - "gone": 410 (the endpoint is disabled);
 * - "http-error": any other status, 3xx included (redirects are not
 *   followed: the registered URL is the one that was checked);
 * - "timeout": no answer within the timeout (DNS, connect, TLS and the
 *   response headers all count);
 * - "connection-error": DNS failure, refused or reset connection, TLS error;
 * - "refused-address": the host resolves to an address the SSRF rule refuses;
 * - "aborted": the engine stopped and cut the attempt (not an attempt at all).
 */
export type SendOutcome = "success" | "gone" | "http-error" | "timeout" | "connection-error" | "refused-address" | "aborted";

/** SendResult is what one POST came to. */
export interface SendResult {
  outcome: SendOutcome;
  /** The answer's status; null when none came. */
  statusCode: number | null;
  /** Retry-After of a 429 or 503 as a delay in ms; null otherwise, or when absent or unreadable. */
  retryAfterMs: number | null;
  /** Real time from the start of the DNS lookup to the answer's headers (or the failure). */
  durationMs: number;
  /**
   * Why, when no status says it; never a body, a header value or a secret.
   * Recorded on the delivery, so the merchant reads it: a refused or
   * unresolvable host says only notPublicMessage().
   */
  error: string | null;
  /** What the operator's log adds to error (the address a host resolved to and its class, the DNS error); never recorded. */
  detail?: string;
}

/** WebhookRequest: one signed delivery, ready to send. */
export interface WebhookRequest {
  url: string;
  /** The webhook-id, webhook-timestamp and webhook-signature headers. */
  headers: Record<string, string>;
  body: string;
  /** Cuts the attempt (the engine stopping); the result is then "aborted". */
  signal?: AbortSignal;
}

/** WebhookSender makes one HTTP POST to an endpoint. */
export interface WebhookSender {
  /** WEBHOOK_TIMEOUT_MS: the longest one attempt takes. */
  readonly timeoutMs: number;
  send(request: WebhookRequest): Promise<SendResult>;
  /** Closes the kept connections (the engine has stopped). */
  close(): Promise<void>;
}

export interface WebhookSenderOptions {
  /** WEBHOOK_TIMEOUT_MS: DNS, connection, TLS and response headers together. */
  timeoutMs: number;
  /** WEBHOOK_ALLOW_PRIVATE_URLS: connect to non-public addresses too (local development, tests). */
  allowPrivate: boolean;
  /** Resolves host names; default: the operating system's resolver. */
  resolve?: HostResolver;
  /** Sent as User-Agent, so receivers can tell our deliveries in their logs. */
  userAgent?: string;
  /** How much of an answer's body is read before the connection is dropped. */
  maxResponseBytes?: number;
  /** The real clock that HTTP-date Retry-After headers are read against. */
  wallClock?: Clock;
  /** Connections kept per endpoint pool: WEBHOOK_CONCURRENCY_PER_ENDPOINT (default 4). */
  connectionsPerEndpoint?: number;
}

/** The User-Agent of every delivery. */
export const defaultWebhookUserAgent = "payment-intents-webhooks/1.0 (Standard Webhooks)";

/**
 * createWebhookSender sends over undici keep-alive pools, one per endpoint
 * origin and checked address set (endpoint-pools.ts, issue 21 §2). The host
 * is resolved at every attempt; when any address it resolves to is not
 * public (and private URLs are not allowed) the attempt is refused before a
 * connection is made. The attempt then goes through the pool of exactly
 * those checked addresses, whose connections are made through a lookup
 * function that returns them, so a DNS answer that changes between the check
 * and the connection (DNS rebinding) cannot move it elsewhere, and a warm
 * connection to an address no longer checked is never reused. The URL's
 * host still names the Host header and TLS's SNI, and certificates are
 * verified against it as usual.
 *
 * One timer bounds the whole attempt. Of the answer only the status line and
 * headers matter: at most maxResponseBytes (4 KiB) of its body are read and
 * dropped, then the connection is closed, so a receiver can neither make us
 * buffer nor hold a slot by trickling a body; a body read to its end leaves
 * the connection warm for the next delivery.
 */
export function createWebhookSender(options: WebhookSenderOptions): WebhookSender {
  const resolve = options.resolve ?? systemResolver;
  const userAgent = options.userAgent ?? defaultWebhookUserAgent;
  const maxResponseBytes = options.maxResponseBytes ?? 4096;
  const wallClock = options.wallClock ?? createSystemClock();
  const { timeoutMs, allowPrivate } = options;
  const pools: EndpointPools = createEndpointPools({ connectionsPerPool: options.connectionsPerEndpoint ?? 4, connectTimeoutMs: timeoutMs });

  async function addressesOf(host: string): Promise<ResolvedAddress[]> {
    const family = isIP(host);
    if (family !== 0) return [{ address: host, family: family as 4 | 6 }];
    return resolve(host);
  }

  /** Reads at most maxResponseBytes of a body, then drops the rest (and its connection). */
  async function drain(body: AsyncIterable<Buffer> & { destroy(): void }) {
    let read = 0;
    try {
      for await (const chunk of body) {
        read += chunk.length;
        if (read > maxResponseBytes) {
          body.destroy();
          return;
        }
      }
    } catch {
      // The timer cut it, or the receiver did: the outcome was decided from the headers.
    }
  }

  return {
    timeoutMs,
    close: () => pools.close(),
    async send(request) {
      const started = performance.now();
      const url = new URL(request.url);
      const host = bareHost(url);
      const result = (outcome: SendOutcome, fields: Partial<SendResult> = {}): SendResult => ({
        outcome,
        statusCode: null,
        retryAfterMs: null,
        error: null,
        ...fields,
        durationMs: Math.round(performance.now() - started),
      });
      if (request.signal?.aborted) return result("aborted", { error: "the delivery engine stopped" });
      // One timer bounds DNS, connection, TLS and the answer's headers, and then what is read of its body.
      const timer = new AbortController();
      const timeout = setTimeout(() => timer.abort(), timeoutMs);
      const signal = request.signal ? AbortSignal.any([request.signal, timer.signal]) : timer.signal;
      const cut = () =>
        request.signal?.aborted ? result("aborted", { error: "the delivery engine stopped" }) : result("timeout", { error: `no answer within ${timeoutMs} ms` });
      const whenCut = new Promise<"cut">((done) => signal.addEventListener("abort", () => done("cut"), { once: true }));
      let bodyLeft = false;
      try {
        let addresses: ResolvedAddress[];
        try {
          const answer = await Promise.race([addressesOf(host), whenCut]);
          if (answer === "cut") return cut();
          addresses = answer;
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          return result("connection-error", { error: notPublicMessage(), detail: `DNS lookup failed${code ? ` (${code})` : ""}` });
        }
        if (addresses.length === 0) return result("connection-error", { error: notPublicMessage(), detail: "the host resolves to no address" });
        const refused = allowPrivate ? undefined : firstRefusedAddress(addresses);
        if (refused) {
          return result("refused-address", {
            error: notPublicMessage(),
            detail: `the host resolves to ${refused.address}, a ${describeAddressClass(refused.kind)} address`,
          });
        }
        let response;
        try {
          response = await pools.poolFor(url.origin, addresses).request({
            path: `${url.pathname}${url.search}`,
            method: "POST",
            headers: { ...request.headers, "content-type": "application/json", "user-agent": userAgent },
            body: request.body,
            signal,
            headersTimeout: timeoutMs,
            bodyTimeout: timeoutMs,
          });
        } catch (error) {
          if (signal.aborted) return cut();
          return result("connection-error", { error: describeError(error as NodeJS.ErrnoException) });
        }
        const statusCode = response.statusCode;
        let decided: SendResult;
        if (statusCode >= 200 && statusCode < 300) decided = result("success", { statusCode });
        else if (statusCode === 410) decided = result("gone", { statusCode });
        else {
          const header = statusCode === 429 || statusCode === 503 ? response.headers["retry-after"] : undefined;
          decided = result("http-error", {
            statusCode,
            retryAfterMs: parseRetryAfter(Array.isArray(header) ? header[0] : header, wallClock.now()),
            error: statusCode >= 300 && statusCode < 400 ? "redirects are not followed" : null,
          });
        }
        // The outcome is known from the headers; the body is read (a little, under the same timer) only to keep the connection.
        bodyLeft = true;
        void drain(response.body).finally(() => clearTimeout(timeout));
        return decided;
      } finally {
        if (!bodyLeft) clearTimeout(timeout);
      }
    },
  };
}

/** describeError: the error's code and message (Node's messages name the address and port, never a body). */
function describeError(error: NodeJS.ErrnoException): string {
  // undici wraps the socket's error (ECONNREFUSED, a certificate refused) as its cause.
  const cause = error.cause as NodeJS.ErrnoException | undefined;
  const inner = cause instanceof Error ? cause : error;
  return inner.code && !inner.message.includes(inner.code) ? `${inner.code}: ${inner.message}` : inner.message;
}
