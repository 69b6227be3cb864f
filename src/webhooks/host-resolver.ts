import { lookup } from "node:dns/promises";

/** ResolvedAddress is one address a host name resolves to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * HostResolver turns a host name into every address it resolves to. Injected
 * so tests can play a DNS that answers differently from one lookup to the
 * next (DNS rebinding) without a DNS server.
 */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

/**
 * systemResolver asks the operating system (getaddrinfo, as every other Node
 * connection would), for every address in the order the system prefers.
 */
export const systemResolver: HostResolver = async (hostname) => {
  const found = await lookup(hostname, { all: true, order: "verbatim" });
  return found.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};
