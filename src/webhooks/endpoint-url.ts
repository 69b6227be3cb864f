import { Code, ConnectError } from "@connectrpc/connect";
import { isIP } from "node:net";
import { classifyAddress, type AddressClass } from "./address-class.js";
import type { HostResolver, ResolvedAddress } from "./host-resolver.js";

/**
 * Rules for a webhook endpoint's URL (README, Webhooks). Checked when an
 * endpoint is registered (checkEndpointUrl, then checkEndpointHost) and, for
 * the address, again at every delivery by the sender: a host that resolved to
 * a public address at registration may resolve to 127.0.0.1 an hour later
 * (DNS rebinding).
 */

/** A host name as DNS spells it (RFC 1123 §2.1), after URL parsing lower-cased it. */
const dnsName = /^(?=.{1,253}\.?$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.?$/;
/** Control characters, white space (ASCII and Unicode) and NUL: a URL parser drops or encodes them silently. */
// eslint-disable-next-line no-control-regex
const unsafeInUrl = /[\u0000-\u0020\u007f-\u00a0\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]/;

/** The longest URL accepted, as for callbackUrl. */
export const maxEndpointUrlLength = 2048;

export interface EndpointUrlOptions {
  /** WEBHOOK_ALLOW_PRIVATE_URLS: also http, and hosts on private, loopback and other non-public addresses. */
  allowPrivate: boolean;
}

function invalid(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}

/**
 * checkEndpointUrl accepts an absolute https URL (http too when private URLs
 * are allowed, for local development and tests) of at most 2048 characters,
 * without user or password, whose host is a DNS name or an IP literal, and
 * returns it normalised as WHATWG URL serialises it (lower-case host,
 * punycode, default port dropped, numeric IPv4 forms such as 2130706433
 * written as 127.0.0.1), the form stored and delivered to. An IP literal host
 * is classified here; a DNS name is classified by checkEndpointHost.
 * Failures are InvalidArgument naming the field.
 */
export function checkEndpointUrl(field: string, value: string, options: EndpointUrlOptions): URL {
  const schemes = options.allowPrivate ? "an absolute http or https URL" : "an absolute https URL";
  const refuse = () => invalid(`${field} must be ${schemes} of at most ${maxEndpointUrlLength} characters`);
  if (value.length > maxEndpointUrlLength || unsafeInUrl.test(value) || !value.isWellFormed()) throw refuse();
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw refuse();
  }
  if (!/^https?:\/\//i.test(value)) throw refuse();
  if (url.protocol !== "https:" && !(url.protocol === "http:" && options.allowPrivate)) {
    throw invalid(`${field} must use https`);
  }
  if (url.username !== "" || url.password !== "") throw invalid(`${field} must not carry credentials`);
  const host = bareHost(url);
  if (isIP(host) === 0 && !dnsName.test(host)) throw invalid(`${field} must name its host as a DNS name or an IP address`);
  if (isIP(host) !== 0 && !options.allowPrivate) {
    const kind = classifyAddress(host);
    if (kind !== "public") throw invalid(`${field} must not point at a ${describe(kind)} address`);
  }
  if (url.href.length > maxEndpointUrlLength) throw refuse();
  return url;
}

export interface EndpointHostOptions extends EndpointUrlOptions {
  resolve: HostResolver;
  /** Longest the lookup may take before the request is answered Unavailable (default 5 s). */
  timeoutMs?: number;
}

/**
 * checkEndpointHost resolves a registered URL's host and refuses it when any
 * address it resolves to is not public (unless allowed), or when it does not
 * resolve at all: an endpoint nobody can reach is a typo, better reported at
 * registration than after 32 hours of retries. A lookup that does not finish
 * in time says nothing about the URL, so it is Unavailable (retry later), not
 * InvalidArgument.
 */
export async function checkEndpointHost(field: string, url: URL, options: EndpointHostOptions): Promise<void> {
  const host = bareHost(url);
  if (isIP(host) !== 0) return;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), options.timeoutMs ?? 5000);
  });
  let addresses: ResolvedAddress[];
  try {
    const answer = await Promise.race([options.resolve(host), timedOut]);
    if (answer === "timeout") throw new ConnectError(`${field}'s host ${host} could not be resolved in time; retry later`, Code.Unavailable);
    addresses = answer;
  } catch (error) {
    if (error instanceof ConnectError) throw error;
    throw invalid(`${field}'s host ${host} does not resolve`);
  } finally {
    clearTimeout(timer);
  }
  if (addresses.length === 0) throw invalid(`${field}'s host ${host} does not resolve`);
  if (options.allowPrivate) return;
  const refused = firstRefusedAddress(addresses);
  if (refused) throw invalid(`${field}'s host ${host} resolves to a ${describe(refused.kind)} address`);
}

/** firstRefusedAddress is the first address that is not public, with its class; undefined when all are public. */
export function firstRefusedAddress(addresses: readonly ResolvedAddress[]): { address: string; kind: AddressClass } | undefined {
  for (const { address } of addresses) {
    const kind = classifyAddress(address);
    if (kind !== "public") return { address, kind };
  }
  return undefined;
}

/** bareHost is the URL's host as a resolver or socket takes it: IPv6 literals without brackets. */
export function bareHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, "$1");
}

/** describe names an address class in a sentence ("a loopback address", "a non-public (reserved) address"). */
function describe(kind: AddressClass): string {
  return ["loopback", "private", "link-local", "multicast", "broadcast"].includes(kind) ? kind : `non-public (${kind})`;
}
