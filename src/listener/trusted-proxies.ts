import { BlockList, isIPv4, isIPv6 } from "node:net";

/** TrustedProxies says which peers may tell the service, in a PROXY header, whom a connection is from. */
export interface TrustedProxies {
  trusts(address: string): boolean;
}

/**
 * parseTrustedProxies reads a comma-separated list of CIDR blocks or single
 * addresses ("10.0.0.0/8,fd00::/8,192.0.2.7"); it throws an Error naming the
 * first bad entry. An IPv4 peer seen as IPv4-mapped IPv6 (::ffff:10.0.0.5, as
 * a dual-stack socket reports it) matches the IPv4 blocks.
 */
export function parseTrustedProxies(text: string): TrustedProxies {
  const list = new BlockList();
  for (const raw of text.split(",")) {
    const entry = raw.trim();
    if (entry === "") continue;
    const [address = "", prefixText, extra] = entry.split("/");
    const family = isIPv4(address) ? "ipv4" : isIPv6(address) ? "ipv6" : undefined;
    const bits = family === "ipv4" ? 32 : 128;
    const prefix = prefixText === undefined ? bits : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
    if (!family || extra !== undefined || !(prefix >= 0 && prefix <= bits)) throw new Error(`"${entry}" is not an address or CIDR block`);
    list.addSubnet(address, prefix, family);
  }
  return {
    trusts(address) {
      const bare = address.replace(/%.*$/, "");
      const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare)?.[1];
      if (mapped) return list.check(mapped, "ipv4");
      if (isIPv4(bare)) return list.check(bare, "ipv4");
      return isIPv6(bare) && list.check(bare, "ipv6");
    },
  };
}
