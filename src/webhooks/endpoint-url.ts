import { Code, ConnectError } from "@connectrpc/connect";
import { isIP } from "node:net";
import { bareHost } from "../rules/http-url.js";
import { invalid } from "../rules/invalid.js";
import { classifyAddress, type AddressClass } from "./address-class.js";
import type { HostResolver, ResolvedAddress } from "./host-resolver.js";

/**
 * Rules for a webhook endpoint's URL past its syntax (README, Webhooks). The
 * syntax (an absolute http(s) URL, its host a DNS name or an IP literal, no
 * credentials, at most 2048 characters) is the url field's rule in the proto,
 * checked before the service runs. Here: the scheme and the addresses,
 * checked when an endpoint is registered (checkEndpointUrl, then
 * checkEndpointHost) and, for the address, again at every delivery by the
 * sender: a host that resolved to a public address at registration may
 * resolve to 127.0.0.1 an hour later (DNS rebinding).
 */

export { bareHost };

/**
 * What every refusal of a non-public URL adds: the setting that allows it, so
 * a developer pointing the service at a local receiver learns what to turn on
 * (the sandbox turns it on by default; see readWebhookConfig).
 */
export const privateUrlHint = "; local receivers need WEBHOOK_ALLOW_PRIVATE_URLS=true on the service (development only)";

export interface EndpointUrlOptions {
  /** WEBHOOK_ALLOW_PRIVATE_URLS: also http, and hosts on private, loopback and other non-public addresses. */
  allowPrivate: boolean;
}

/**
 * checkEndpointUrl takes a URL that passed the field's syntax rule and
 * refuses http unless private URLs are allowed (local development and tests),
 * and an IP literal host that is not public; a DNS name is classified by
 * checkEndpointHost. It returns the URL as WHATWG URL serialises it (numeric
 * IPv4 forms such as 2130706433 written as 127.0.0.1), the form stored and
 * delivered to. Failures are InvalidArgument naming the field.
 */
export function checkEndpointUrl(field: string, value: string, options: EndpointUrlOptions): URL {
  const url = new URL(value);
  if (url.protocol !== "https:" && !options.allowPrivate) throw invalid(`${field} must use https${privateUrlHint}`);
  const host = bareHost(url);
  if (isIP(host) !== 0 && !options.allowPrivate) {
    const kind = classifyAddress(host);
    if (kind !== "public") throw invalid(`${field} must not point at a ${describe(kind)} address${privateUrlHint}`);
  }
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
  if (refused) throw invalid(`${field}'s host ${host} resolves to a ${describe(refused.kind)} address${privateUrlHint}`);
}

/** firstRefusedAddress is the first address that is not public, with its class; undefined when all are public. */
export function firstRefusedAddress(addresses: readonly ResolvedAddress[]): { address: string; kind: AddressClass } | undefined {
  for (const { address } of addresses) {
    const kind = classifyAddress(address);
    if (kind !== "public") return { address, kind };
  }
  return undefined;
}

/** describe names an address class in a sentence ("a loopback address", "a non-public (reserved) address"). */
function describe(kind: AddressClass): string {
  return ["loopback", "private", "link-local", "multicast", "broadcast"].includes(kind) ? kind : `non-public (${kind})`;
}
