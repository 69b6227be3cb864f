/** Why a connection was refused at accept time. */
export type CapRefusal = "max-connections" | "max-connections-per-address";

export interface ConnectionCapsOptions {
  maxConnections: number;
  maxConnectionsPerAddress: number;
  /** Connections the host's loopback address may open beyond maxConnections. */
  loopbackReserve: number;
}

/** ConnectionCaps counts open connections in total and per client address. */
export interface ConnectionCaps {
  /**
   * admit counts a new connection from address, or says which cap refuses
   * it (and then counts nothing). An unknown address (the socket is already
   * gone) is refused as over the total.
   */
  admit(address: string | undefined): CapRefusal | undefined;
  /** release uncounts a connection admit() counted. */
  release(address: string): void;
  /** Connections counted now. */
  open(): number;
}

/**
 * The host's own loopback address, where a local health check (Docker
 * HEALTHCHECK, a sidecar probe) comes from. Only these exact addresses: a
 * client elsewhere on 127.0.0.0/8 is an ordinary client.
 */
const loopbackAddresses = new Set(["127.0.0.1", "::1", "::ffff:127.0.0.1"]);

/**
 * createConnectionCaps refuses a connection beyond maxConnections in total
 * (plus loopbackReserve for the loopback address) or beyond
 * maxConnectionsPerAddress from its address. Refusing at accept time, before
 * a byte is read, keeps descriptors and memory for the clients already in,
 * so one client cannot exhaust them and take /healthz down with everything
 * else.
 */
export function createConnectionCaps(options: ConnectionCapsOptions): ConnectionCaps {
  const perAddress = new Map<string, number>();
  let total = 0;
  return {
    admit(address) {
      if (address === undefined) return "max-connections";
      const cap = options.maxConnections + (loopbackAddresses.has(address) ? options.loopbackReserve : 0);
      if (total >= cap) return "max-connections";
      const fromAddress = perAddress.get(address) ?? 0;
      if (fromAddress >= options.maxConnectionsPerAddress) return "max-connections-per-address";
      perAddress.set(address, fromAddress + 1);
      total++;
      return undefined;
    },
    release(address) {
      const fromAddress = perAddress.get(address);
      if (fromAddress === undefined) return;
      if (fromAddress <= 1) perAddress.delete(address);
      else perAddress.set(address, fromAddress - 1);
      total--;
    },
    open: () => total,
  };
}
