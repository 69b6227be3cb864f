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
  /**
   * admitFromBalancer counts a connection from a trusted balancer in the
   * total only: the client it carries is not known until its PROXY header
   * is read, and the balancer's own address stands for every client behind
   * it, so capping that would let one client's connections refuse everyone's.
   */
  admitFromBalancer(balancer: string | undefined): "max-connections" | undefined;
  /**
   * admitClient counts a balanced connection against the share of the
   * client its PROXY header named (or the balancer's own address for a
   * header that names none): "max-connections-per-address" when that client
   * already holds its share (then counts nothing).
   */
  admitClient(client: string): "max-connections-per-address" | undefined;
  /** releaseBalanced uncounts a balanced connection: its total, and its client's share when admitClient counted one. */
  releaseBalanced(client: string | undefined): void;
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
 * maxConnectionsPerAddress from its client's address. Refusing at accept
 * time, before a byte is read, keeps descriptors and memory for the clients
 * already in, so one client cannot exhaust them and take /healthz down with
 * everything else; behind a trusted balancer the per-address share waits for
 * the PROXY header, which names the client.
 */
export function createConnectionCaps(options: ConnectionCapsOptions): ConnectionCaps {
  const perAddress = new Map<string, number>();
  let total = 0;
  const overTotal = (address: string) =>
    total >= options.maxConnections + (loopbackAddresses.has(address) ? options.loopbackReserve : 0);
  const takeShare = (address: string): boolean => {
    const fromAddress = perAddress.get(address) ?? 0;
    if (fromAddress >= options.maxConnectionsPerAddress) return false;
    perAddress.set(address, fromAddress + 1);
    return true;
  };
  const releaseShare = (address: string): boolean => {
    const fromAddress = perAddress.get(address);
    if (fromAddress === undefined) return false;
    if (fromAddress <= 1) perAddress.delete(address);
    else perAddress.set(address, fromAddress - 1);
    return true;
  };
  return {
    admit(address) {
      if (address === undefined || overTotal(address)) return "max-connections";
      if (!takeShare(address)) return "max-connections-per-address";
      total++;
      return undefined;
    },
    release(address) {
      if (releaseShare(address)) total--;
    },
    admitFromBalancer(balancer) {
      if (balancer === undefined || overTotal(balancer)) return "max-connections";
      total++;
      return undefined;
    },
    admitClient: (client) => (takeShare(client) ? undefined : "max-connections-per-address"),
    releaseBalanced(client) {
      if (client !== undefined) releaseShare(client);
      total--;
    },
    open: () => total,
  };
}
