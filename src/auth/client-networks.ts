import { BlockList, isIP } from "node:net";

/**
 * ClientNetworks is a key's allowedCidrs compiled once: whether a client
 * address is inside one of them.
 */
export interface ClientNetworks {
  allows(address: string | undefined): boolean;
}

/**
 * parseCidr reads "203.0.113.0/24" or "2001:db8::/32" (a bare address is
 * its own /32 or /128); undefined when it is neither. Node's BlockList
 * compares, so IPv4 and IPv6 follow one implementation.
 */
export function parseCidr(text: string): { address: string; prefix: number; type: "ipv4" | "ipv6" } | undefined {
  const [address = "", prefixText, extra] = text.split("/");
  const version = isIP(address);
  if (version === 0 || extra !== undefined) return undefined;
  const max = version === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^(0|[1-9][0-9]{0,2})$/.test(prefixText)) return undefined;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (prefix > max) return undefined;
  return { address, prefix, type: version === 4 ? "ipv4" : "ipv6" };
}

/** The IPv4 address inside an IPv4-mapped IPv6 one (::ffff:203.0.113.7), as a dual-stack socket reports IPv4 peers. */
const mappedV4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/**
 * createClientNetworks compiles networks already checked by parseCidr. No
 * networks allow every address; otherwise an unknown address is refused.
 */
export function createClientNetworks(cidrs: readonly string[]): ClientNetworks {
  if (cidrs.length === 0) return { allows: () => true };
  const list = new BlockList();
  for (const cidr of cidrs) {
    const parsed = parseCidr(cidr);
    if (parsed) list.addSubnet(parsed.address, parsed.prefix, parsed.type);
  }
  return {
    allows(address) {
      if (!address) return false;
      const v4 = mappedV4.exec(address)?.[1];
      if (v4) return list.check(v4, "ipv4") || list.check(address, "ipv6");
      const version = isIP(address);
      return version !== 0 && list.check(address, version === 4 ? "ipv4" : "ipv6");
    },
  };
}

/**
 * createClientNetworksCache compiles each distinct list of networks once:
 * building a BlockList per request cost ~45 µs of CPU (npm run bench:keys),
 * a lookup in a compiled one a fraction of that. Bounded: past maxEntries
 * lists it starts again empty (keys with networks are few; a flood of
 * distinct lists is a flood of distinct keys, which verification bounds first).
 */
export function createClientNetworksCache(maxEntries = 10_000): (cidrs: readonly string[]) => ClientNetworks {
  const compiled = new Map<string, ClientNetworks>();
  const anywhere = createClientNetworks([]);
  return (cidrs) => {
    if (cidrs.length === 0) return anywhere;
    const id = cidrs.join(",");
    let networks = compiled.get(id);
    if (!networks) {
      if (compiled.size >= maxEntries) compiled.clear();
      networks = createClientNetworks(cidrs);
      compiled.set(id, networks);
    }
    return networks;
  };
}

/**
 * networksWithin says whether every network of `inner` lies inside one of
 * `outer`'s (the same family, a prefix at least as long, its address inside):
 * what a key restricted to networks may give a key it makes. No networks
 * means anywhere, so an empty `inner` is within only an empty `outer`.
 */
export function networksWithin(inner: readonly string[], outer: readonly string[]): boolean {
  if (outer.length === 0) return true;
  if (inner.length === 0) return false;
  const outerParsed = outer.map(parseCidr).filter((n) => n !== undefined);
  return inner.every((cidr) => {
    const network = parseCidr(cidr);
    return (
      network !== undefined &&
      outerParsed.some((wide) => {
        if (wide.type !== network.type || wide.prefix > network.prefix) return false;
        const list = new BlockList();
        list.addSubnet(wide.address, wide.prefix, wide.type);
        return list.check(network.address, network.type);
      })
    );
  });
}
