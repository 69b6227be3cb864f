import type { LookupFunction } from "node:net";
import { Pool } from "undici";
import type { ResolvedAddress } from "./host-resolver.js";

export interface EndpointPoolsOptions {
  /** Connections one pool keeps to its endpoint: WEBHOOK_CONCURRENCY_PER_ENDPOINT, all one endpoint may have in flight. */
  connectionsPerPool: number;
  /** Most pools kept; past it the least recently used one is closed (its idle connections with it). */
  maxPools?: number;
  /** How long an idle connection is kept for the next delivery (default 30 s; a receiver's shorter Keep-Alive wins). */
  keepAliveMs?: number;
  /** Longest the TCP and TLS handshake may take (the attempt's timeout). */
  connectTimeoutMs: number;
}

/** EndpointPools hands out keep-alive connection pools, one per endpoint origin and checked address set. */
export interface EndpointPools {
  /**
   * The pool of origin (scheme, host, port) whose connections go to exactly
   * addresses (checked by the caller against the SSRF rule), whatever the DNS
   * says when a connection is made.
   */
  poolFor(origin: string, addresses: readonly ResolvedAddress[]): Pool;
  /** Closes every pool: connections in use finish, idle ones close. */
  close(): Promise<void>;
}

/**
 * createEndpointPools keeps one undici Pool per (origin, checked addresses)
 * (issue 21, §2): deliveries to an endpoint reuse warm connections instead
 * of a TCP (and TLS) handshake each, and still connect only where the
 * attempt's own DNS check allowed. Keying by the address set is what keeps
 * per-attempt DNS pinning with pooling: when the host's addresses change
 * (DNS rebinding included), the next attempt gets a different pool whose
 * connections go to the newly checked addresses; connections to the old
 * ones are never reused for it. The URL's host stays the Host header and
 * the TLS server name, and certificates are verified as usual.
 */
export function createEndpointPools(options: EndpointPoolsOptions): EndpointPools {
  const maxPools = options.maxPools ?? 1000;
  const keepAliveMs = options.keepAliveMs ?? 30_000;
  /** In least recently used order (a Map keeps insertion order). */
  const pools = new Map<string, Pool>();

  return {
    poolFor(origin, addresses) {
      const key = `${origin} ${addresses.map((a) => a.address).join(",")}`;
      let pool = pools.get(key);
      if (pool) {
        pools.delete(key);
        pools.set(key, pool);
        return pool;
      }
      pool = new Pool(origin, {
        connections: options.connectionsPerPool,
        pipelining: 1,
        keepAliveTimeout: keepAliveMs,
        keepAliveMaxTimeout: keepAliveMs,
        connect: { timeout: options.connectTimeoutMs, lookup: pinnedLookup(addresses) },
      });
      pools.set(key, pool);
      if (pools.size > maxPools) {
        const [oldestKey, oldest] = pools.entries().next().value!;
        pools.delete(oldestKey);
        void oldest.close().catch(() => {});
      }
      return pool;
    },
    async close() {
      const all = [...pools.values()];
      pools.clear();
      await Promise.all(all.map((pool) => pool.close().catch(() => {})));
    },
  };
}

/**
 * pinnedLookup answers a socket's lookup with the addresses already checked,
 * whatever the DNS says now. Node asks for all addresses (family
 * auto-selection) or for one, of a family or any.
 */
export function pinnedLookup(addresses: readonly ResolvedAddress[]): LookupFunction {
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
