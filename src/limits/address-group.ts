import { isIPv4, isIPv6 } from "node:net";

/**
 * addressGroup names the set of addresses that one client plausibly
 * controls: an IPv4 address on its own (/32), and for IPv6 the /64 it lies
 * in, since a single host or customer line is routinely handed a whole /64
 * and can pick any address in it (RFC 4291 §2.5.1, RFC 8981). IPv4-mapped
 * IPv6 addresses (::ffff:192.0.2.1, as a dual-stack socket reports IPv4
 * peers) count as the IPv4 address. Anything unparsable (an address that was
 * not known) shares one group, "unknown".
 */
export function addressGroup(address: string | undefined): string {
  if (address === undefined) return "unknown";
  // A zone index (fe80::1%eth0) names the local interface, not the peer.
  const bare = address.replace(/%.*$/, "");
  if (isIPv4(bare)) return `${bare}/32`;
  if (!isIPv6(bare)) return "unknown";
  const groups = expandIPv6(bare);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}/32`;
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(":")}::/64`;
}

/** expandIPv6 returns the eight 16-bit groups of a valid IPv6 address (with "::" and a trailing dotted quad resolved). */
function expandIPv6(address: string): number[] {
  const parse = (part: string): number[] =>
    part === ""
      ? []
      : part.split(":").flatMap((piece) => {
          if (!piece.includes(".")) return [parseInt(piece, 16)];
          const [a, b, c, d] = piece.split(".").map(Number) as [number, number, number, number];
          return [(a << 8) | b, (c << 8) | d];
        });
  const [head = "", tail] = address.split("::");
  const left = parse(head);
  if (tail === undefined) return left;
  const right = parse(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}
