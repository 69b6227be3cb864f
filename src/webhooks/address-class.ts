import { isIPv4, isIPv6 } from "node:net";

/**
 * Classification of IP addresses by whether the open internet can route to
 * them, from IANA's special-purpose address registries (RFC 6890 and its
 * updates). The webhook sender refuses every class but "public" unless
 * WEBHOOK_ALLOW_PRIVATE_URLS is true: the service must not be a way for a
 * merchant to reach its own network (cloud metadata at 169.254.169.254, an
 * admin port on 127.0.0.1, a database on 10.x). Where an IPv6 form carries an
 * IPv4 address (IPv4-mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96, 6to4
 * 2002::/16), the IPv4 address decides. When in doubt the answer is
 * "reserved": a range the registry marks as not globally reachable, or not
 * yet allocated, is refused.
 */
export type AddressClass =
  | "public"
  | "unspecified"
  | "this-network"
  | "loopback"
  | "private"
  | "shared"
  | "link-local"
  | "unique-local"
  | "multicast"
  | "broadcast"
  | "documentation"
  | "benchmarking"
  | "reserved";

type Rule = [prefix: bigint, length: number, kind: AddressClass | "embedded-v4"];

function v4(text: string): bigint {
  return text.split(".").reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

/** Parses a valid IPv6 address (no zone) into 128 bits; a dotted IPv4 tail becomes its last two groups. */
function v6(text: string): bigint {
  const hex = text.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_, a: string, b: string, c: string, d: string) =>
    `${((Number(a) << 8) | Number(b)).toString(16)}:${((Number(c) << 8) | Number(d)).toString(16)}`,
  );
  const groups = (part: string) => (part === "" ? [] : part.split(":").map((g) => BigInt(parseInt(g, 16))));
  const [left, right] = hex.split("::") as [string, string | undefined];
  const l = groups(left);
  const r = right === undefined ? [] : groups(right);
  const fill = right === undefined ? [] : new Array<bigint>(8 - l.length - r.length).fill(0n);
  return [...l, ...fill, ...r].reduce((acc, g) => (acc << 16n) | g, 0n);
}

const v4Rules: Rule[] = [
  [v4("0.0.0.0"), 32, "unspecified"],
  [v4("0.0.0.0"), 8, "this-network"],
  [v4("10.0.0.0"), 8, "private"],
  [v4("100.64.0.0"), 10, "shared"], // carrier-grade NAT (RFC 6598)
  [v4("127.0.0.0"), 8, "loopback"],
  [v4("169.254.0.0"), 16, "link-local"], // includes cloud metadata, 169.254.169.254
  [v4("172.16.0.0"), 12, "private"],
  [v4("192.0.0.0"), 24, "reserved"], // IETF protocol assignments
  [v4("192.0.2.0"), 24, "documentation"],
  [v4("192.88.99.0"), 24, "reserved"], // deprecated 6to4 relay anycast
  [v4("192.168.0.0"), 16, "private"],
  [v4("198.18.0.0"), 15, "benchmarking"],
  [v4("198.51.100.0"), 24, "documentation"],
  [v4("203.0.113.0"), 24, "documentation"],
  [v4("224.0.0.0"), 4, "multicast"],
  [v4("255.255.255.255"), 32, "broadcast"],
  [v4("240.0.0.0"), 4, "reserved"],
];

const v6Rules: Rule[] = [
  [v6("::"), 128, "unspecified"],
  [v6("::1"), 128, "loopback"],
  [v6("::ffff:0:0"), 96, "embedded-v4"], // IPv4-mapped
  [v6("::"), 96, "reserved"], // deprecated IPv4-compatible
  [v6("64:ff9b::"), 96, "embedded-v4"], // NAT64 well-known prefix
  [v6("64:ff9b:1::"), 48, "private"], // local-use NAT64
  [v6("100::"), 64, "reserved"], // discard-only
  [v6("2001:db8::"), 32, "documentation"],
  [v6("2001:2::"), 48, "benchmarking"],
  [v6("2001::"), 23, "reserved"], // IETF protocol assignments, Teredo among them
  [v6("2002::"), 16, "embedded-v4"], // 6to4
  [v6("3fff::"), 20, "documentation"],
  [v6("5f00::"), 16, "reserved"], // SRv6 SIDs
  [v6("fc00::"), 7, "unique-local"], // includes AWS metadata fd00:ec2::254
  [v6("fe80::"), 10, "link-local"],
  [v6("fec0::"), 10, "private"], // deprecated site-local
  [v6("ff00::"), 8, "multicast"],
];

const globalUnicast: Rule = [v6("2000::"), 3, "public"];

function matches(address: bigint, bits: bigint, [prefix, length]: Rule): boolean {
  const shift = bits - BigInt(length);
  return address >> shift === prefix >> shift;
}

function classifyV4(address: bigint): AddressClass {
  for (const rule of v4Rules) if (matches(address, 32n, rule)) return rule[2] as AddressClass;
  return "public";
}

/**
 * classifyAddress names the class of an IP address (v4, or v6 with or
 * without a zone); anything that is not a valid IP address throws.
 */
export function classifyAddress(ip: string): AddressClass {
  if (isIPv4(ip)) return classifyV4(v4(ip));
  const bare = ip.replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, "");
  if (!isIPv6(bare)) throw new Error(`not an IP address: ${JSON.stringify(ip)}`);
  const address = v6(bare);
  for (const rule of v6Rules) {
    if (!matches(address, 128n, rule)) continue;
    if (rule[2] !== "embedded-v4") return rule[2];
    // 6to4 carries the IPv4 address right after its 16-bit prefix; the others in the last 32 bits.
    return classifyV4(rule[1] === 16 ? (address >> 80n) & 0xffffffffn : address & 0xffffffffn);
  }
  return matches(address, 128n, globalUnicast) ? "public" : "reserved";
}

/** isPublicAddress: whether the open internet routes to ip (classifyAddress says "public"). */
export function isPublicAddress(ip: string): boolean {
  return classifyAddress(ip) === "public";
}
