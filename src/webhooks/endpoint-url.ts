import { Code, ConnectError } from "@connectrpc/connect";
import { isIP } from "node:net";
import { bareHost } from "../rules/http-url.js";
import { invalid } from "../rules/invalid.js";
import type { Logger } from "../lib/logger.js";
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
 *
 * Whatever the reason a host is refused (an IP literal that is not public, a
 * name that resolves to a private or loopback address, a name that does not
 * resolve), the merchant reads one sentence, notPublicMessage: telling an
 * internal name from an unknown one, or naming the address and its class,
 * would map the internal network for whoever registers URLs (issue 21, §5).
 * The address and the reason go to the operator's log only.
 */

export { bareHost };

/**
 * What every refusal of a non-public URL adds: the setting that allows it, so
 * a developer pointing the service at a local receiver learns what to turn on
 * (the sandbox turns it on by default; see readWebhookConfig).
 */
export const privateUrlHint = "; local receivers need WEBHOOK_ALLOW_PRIVATE_URLS=true on the service (development only)";
/**
 * notPublicMessage is what a merchant reads about any refused host, at
 * registration and in a delivery's recorded error: one sentence whatever the
 * host resolves to, and whether it resolves (issue 21 §5), with the setting
 * that allows local receivers (issue 22 §4).
 */
export function notPublicMessage(field = "the URL"): string {
  return `${field}'s host does not resolve to a public address${privateUrlHint}`;
}

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
export function checkEndpointUrl(field: string, value: string, options: EndpointUrlOptions & { logger?: Logger }): URL {
  const url = new URL(value);
  if (url.protocol !== "https:" && !options.allowPrivate) throw invalid(`${field} must use https${privateUrlHint}`);
  const host = bareHost(url);
  if (isIP(host) !== 0 && !options.allowPrivate) {
    const kind = classifyAddress(host);
    if (kind !== "public") {
      options.logger?.info({ host, address: host, reason: describeAddressClass(kind) }, "webhook endpoint refused: its host is not a public address");
      throw invalid(notPublicMessage(field));
    }
  }
  return url;
}

export interface EndpointHostOptions extends EndpointUrlOptions {
  resolve: HostResolver;
  /** The operator's log: why a host was refused (the merchant reads only notPublicMessage). */
  logger?: Logger;
  /** Longest the lookup may take before the request is answered Unavailable (default 5 s). */
  timeoutMs?: number;
}

/**
 * checkEndpointHost resolves a registered URL's host and refuses it when any
 * address it resolves to is not public (unless allowed), or when it does not
 * resolve at all: an endpoint nobody can reach is a typo, better reported at
 * registration than after 32 hours of retries. Both answer the same
 * notPublicMessage; the log says which it was. A lookup that does not finish
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
  const refuse = (fields: Record<string, unknown>) => {
    options.logger?.info({ host, ...fields }, "webhook endpoint refused: its host is not a public address");
    return invalid(notPublicMessage(field));
  };
  let addresses: ResolvedAddress[];
  try {
    const answer = await Promise.race([options.resolve(host), timedOut]);
    if (answer === "timeout") throw new ConnectError(`${field}'s host ${host} could not be resolved in time; retry later`, Code.Unavailable);
    addresses = answer;
  } catch (error) {
    if (error instanceof ConnectError) throw error;
    throw refuse({ reason: `does not resolve${(error as NodeJS.ErrnoException).code ? ` (${(error as NodeJS.ErrnoException).code})` : ""}` });
  } finally {
    clearTimeout(timer);
  }
  if (addresses.length === 0) throw refuse({ reason: "resolves to no address" });
  if (options.allowPrivate) return;
  const refused = firstRefusedAddress(addresses);
  if (refused) throw refuse({ address: refused.address, reason: `${describeAddressClass(refused.kind)} address` });
}

/** firstRefusedAddress is the first address that is not public, with its class; undefined when all are public. */
export function firstRefusedAddress(addresses: readonly ResolvedAddress[]): { address: string; kind: AddressClass } | undefined {
  for (const { address } of addresses) {
    const kind = classifyAddress(address);
    if (kind !== "public") return { address, kind };
  }
  return undefined;
}

/** describeAddressClass names an address class for the operator's log ("loopback", "non-public (reserved)"). */
export function describeAddressClass(kind: AddressClass): string {
  return ["loopback", "private", "link-local", "multicast", "broadcast"].includes(kind) ? kind : `non-public (${kind})`;
}
