import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
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
}

/** The User-Agent of every delivery. */
export const defaultWebhookUserAgent = "payment-intents-webhooks/1.0 (Standard Webhooks)";

/**
 * createWebhookSender sends with node:http and node:https, one connection per
 * attempt (no pooling: each attempt connects to the address it has just
 * checked). The host is resolved once; when any address it resolves to is not
 * public (and private URLs are not allowed) the attempt is refused before a
 * connection is made. The connection then goes to those checked addresses
 * only, through a lookup function that returns them, so a DNS answer that
 * changes between the check and the connection (DNS rebinding) cannot move it
 * elsewhere. The URL's host still names the Host header and TLS's SNI, and
 * certificates are verified against it as usual.
 *
 * One timer bounds the whole attempt. Of the answer only the status line and
 * headers matter: at most maxResponseBytes (4 KiB) of its body are read and
 * dropped, then the connection is closed, so a receiver can neither make us
 * buffer nor hold a slot by trickling a body.
 */
export function createWebhookSender(options: WebhookSenderOptions): WebhookSender {
  const resolve = options.resolve ?? systemResolver;
  const userAgent = options.userAgent ?? defaultWebhookUserAgent;
  const maxResponseBytes = options.maxResponseBytes ?? 4096;
  const wallClock = options.wallClock ?? createSystemClock();
  const { timeoutMs, allowPrivate } = options;

  async function addressesOf(host: string): Promise<ResolvedAddress[]> {
    const family = isIP(host);
    if (family !== 0) return [{ address: host, family: family as 4 | 6 }];
    return resolve(host);
  }

  return {
    timeoutMs,
    send(request) {
      const started = performance.now();
      const url = new URL(request.url);
      const host = bareHost(url);
      return new Promise<SendResult>((done) => {
        let settled = false;
        let outgoing: http.ClientRequest | undefined;
        const finish = (outcome: SendOutcome, fields: Partial<SendResult> = {}) => {
          if (settled) return;
          settled = true;
          request.signal?.removeEventListener("abort", onAbort);
          done({
            outcome,
            statusCode: null,
            retryAfterMs: null,
            error: null,
            ...fields,
            durationMs: Math.round(performance.now() - started),
          });
        };
        // The timer also ends a body still trickling in after the headers were classified.
        const timer = setTimeout(() => {
          finish("timeout", { error: `no answer within ${timeoutMs} ms` });
          outgoing?.destroy();
        }, timeoutMs);
        const onAbort = () => {
          finish("aborted", { error: "the delivery engine stopped" });
          clearTimeout(timer);
          outgoing?.destroy();
        };
        if (request.signal?.aborted) return onAbort();
        request.signal?.addEventListener("abort", onAbort);

        addressesOf(host).then(
          (addresses) => {
            if (settled) return;
            if (addresses.length === 0) {
              clearTimeout(timer);
              return finish("connection-error", { error: notPublicMessage(), detail: "the host resolves to no address" });
            }
            const refused = allowPrivate ? undefined : firstRefusedAddress(addresses);
            if (refused) {
              clearTimeout(timer);
              return finish("refused-address", {
                error: notPublicMessage(),
                detail: `the host resolves to ${refused.address}, a ${describeAddressClass(refused.kind)} address`,
              });
            }
            outgoing = (url.protocol === "https:" ? https : http).request({
              protocol: url.protocol,
              hostname: host,
              port: url.port === "" ? undefined : Number(url.port),
              path: `${url.pathname}${url.search}`,
              method: "POST",
              agent: false,
              lookup: pinnedLookup(addresses),
              headers: {
                ...request.headers,
                "content-type": "application/json",
                "content-length": String(Buffer.byteLength(request.body)),
                "user-agent": userAgent,
              },
            });
            outgoing.on("response", (response) => {
              const statusCode = response.statusCode ?? 0;
              if (statusCode >= 200 && statusCode < 300) finish("success", { statusCode });
              else if (statusCode === 410) finish("gone", { statusCode });
              else {
                const retryAfter = statusCode === 429 || statusCode === 503 ? response.headers["retry-after"] : undefined;
                finish("http-error", {
                  statusCode,
                  retryAfterMs: parseRetryAfter(retryAfter, wallClock.now()),
                  error: statusCode >= 300 && statusCode < 400 ? "redirects are not followed" : null,
                });
              }
              let read = 0;
              response.on("data", (chunk: Buffer) => {
                read += chunk.length;
                if (read > maxResponseBytes) outgoing?.destroy();
              });
              response.on("error", () => {});
              response.on("close", () => {
                clearTimeout(timer);
                outgoing?.destroy();
              });
            });
            outgoing.on("error", (error: NodeJS.ErrnoException) => {
              clearTimeout(timer);
              finish("connection-error", { error: describeError(error) });
            });
            outgoing.end(request.body);
          },
          (error: NodeJS.ErrnoException) => {
            clearTimeout(timer);
            finish("connection-error", { error: notPublicMessage(), detail: `DNS lookup failed${error.code ? ` (${error.code})` : ""}` });
          },
        );
      });
    },
  };
}

/**
 * pinnedLookup answers a socket's lookup with the addresses already checked,
 * whatever the DNS says now. Node asks for all addresses (family
 * auto-selection) or for one, of a family or any.
 */
function pinnedLookup(addresses: readonly ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
    if (wanted.length === 0) {
      const error: NodeJS.ErrnoException = new Error("no checked address of the requested family");
      error.code = "ENOTFOUND";
      return callback(error, "", 0);
    }
    if (options.all) return callback(null, wanted.map(({ address, family }) => ({ address, family })));
    callback(null, wanted[0]!.address, wanted[0]!.family);
  };
}

/** describeError: the error's code and message (Node's messages name the address and port, never a body). */
function describeError(error: NodeJS.ErrnoException): string {
  return error.code && !error.message.includes(error.code) ? `${error.code}: ${error.message}` : error.message;
}
