import { isIPv4, isIPv6 } from "node:net";

/**
 * The PROXY protocol (HAProxy's "The PROXY protocol", versions 1 and 2): a
 * balancer that terminates the client's TCP connection opens its own to the
 * service and writes, before anything else, a header naming the client's
 * address. https://www.haproxy.org/download/2.9/doc/proxy-protocol.txt
 */

/** The version 1 header starts with these bytes (§2.1). */
export const proxyV1Signature = Buffer.from("PROXY ", "latin1");
/** The version 2 header starts with these twelve bytes (§2.2). */
export const proxyV2Signature = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);

/** A version 1 header is at most 107 bytes, CRLF included (§2.1). */
const maxV1Length = 107;
/**
 * The most a version 2 header's address block and TLVs may take here. HAProxy
 * sends 12 (TCP4) or 36 (TCP6) bytes of addresses plus the TLVs it is told to
 * add (a unique id, the authority, TLS facts), far under this; the format
 * allows 65535, which no balancer needs and a client should not make the
 * service buffer.
 */
export const maxV2AddressBlock = 2048;

/** What the first bytes of a connection say as a PROXY header. */
export type ProxyHeaderResult =
  /** Not enough bytes yet: read more (within the header timeout). */
  | { kind: "incomplete" }
  /** Not a valid header: the connection is closed. Never echoes the bytes. */
  | { kind: "invalid"; reason: string }
  /**
   * A complete header of `length` bytes. `client` is the address the
   * balancer received the connection from; undefined for a LOCAL command
   * (the balancer's own health check) or an UNKNOWN / unspecified family,
   * where the connection's own peer address stands.
   */
  | { kind: "header"; version: 1 | 2; length: number; client: { address: string; port: number } | undefined };

/** parseProxyHeader reads a PROXY header (v1 or v2) at the start of bytes, strictly. */
export function parseProxyHeader(bytes: Buffer): ProxyHeaderResult {
  if (startsLike(bytes, proxyV2Signature)) return bytes.length < proxyV2Signature.length ? { kind: "incomplete" } : parseV2(bytes);
  if (startsLike(bytes, proxyV1Signature)) return bytes.length < proxyV1Signature.length ? { kind: "incomplete" } : parseV1(bytes);
  return { kind: "invalid", reason: "no PROXY header" };
}

/** startsLike: bytes and signature agree on their common length. */
export function startsLike(bytes: Buffer, signature: Buffer): boolean {
  const n = Math.min(bytes.length, signature.length);
  return bytes.subarray(0, n).equals(signature.subarray(0, n));
}

const port = /^(0|[1-9][0-9]{0,4})$/;

function parseV1(bytes: Buffer): ProxyHeaderResult {
  const end = bytes.indexOf("\r\n", 0, "latin1");
  if (end < 0) {
    return bytes.length >= maxV1Length ? { kind: "invalid", reason: "PROXY v1 header longer than 107 bytes" } : { kind: "incomplete" };
  }
  if (end + 2 > maxV1Length) return { kind: "invalid", reason: "PROXY v1 header longer than 107 bytes" };
  const line = bytes.subarray(0, end).toString("latin1");
  const parts = line.split(" ");
  const length = end + 2;
  // "PROXY UNKNOWN" may be followed by anything up to the CRLF (§2.1).
  if (parts[1] === "UNKNOWN") return { kind: "header", version: 1, length, client: undefined };
  if (parts.length !== 6) return { kind: "invalid", reason: "PROXY v1 header: wrong number of fields" };
  const [, family, source, destination, sourcePort, destinationPort] = parts as [string, string, string, string, string, string];
  const valid = family === "TCP4" ? isIPv4 : family === "TCP6" ? isIPv6 : undefined;
  if (!valid) return { kind: "invalid", reason: "PROXY v1 header: unknown protocol" };
  if (!valid(source) || !valid(destination)) return { kind: "invalid", reason: "PROXY v1 header: malformed address" };
  if (!port.test(sourcePort) || !port.test(destinationPort) || Number(sourcePort) > 65535 || Number(destinationPort) > 65535) {
    return { kind: "invalid", reason: "PROXY v1 header: malformed port" };
  }
  return { kind: "header", version: 1, length, client: { address: source, port: Number(sourcePort) } };
}

function parseV2(bytes: Buffer): ProxyHeaderResult {
  if (bytes.length < 16) return { kind: "incomplete" };
  const versionCommand = bytes[12]!;
  const familyProtocol = bytes[13]!;
  const blockLength = bytes.readUInt16BE(14);
  if (versionCommand >> 4 !== 2) return { kind: "invalid", reason: "PROXY v2 header: unsupported version" };
  const command = versionCommand & 0x0f;
  if (command > 1) return { kind: "invalid", reason: "PROXY v2 header: unknown command" };
  if (blockLength > maxV2AddressBlock) return { kind: "invalid", reason: "PROXY v2 header: address block too large" };
  const length = 16 + blockLength;
  if (bytes.length < length) return { kind: "incomplete" };
  // LOCAL: the balancer speaks for itself (a health check); the addresses, if any, are ignored (§2.2).
  if (command === 0) return { kind: "header", version: 2, length, client: undefined };
  const block = bytes.subarray(16, length);
  switch (familyProtocol) {
    case 0x00: // UNSPEC: the sender could not tell; the connection's own addresses stand.
      return { kind: "header", version: 2, length, client: undefined };
    case 0x11: // TCP over IPv4: 4 + 4 address bytes, 2 + 2 port bytes.
      if (blockLength < 12) return { kind: "invalid", reason: "PROXY v2 header: address block too short" };
      return { kind: "header", version: 2, length, client: { address: [...block.subarray(0, 4)].join("."), port: block.readUInt16BE(8) } };
    case 0x21: // TCP over IPv6: 16 + 16 address bytes, 2 + 2 port bytes.
      if (blockLength < 36) return { kind: "invalid", reason: "PROXY v2 header: address block too short" };
      return { kind: "header", version: 2, length, client: { address: ipv6Text(block.subarray(0, 16)), port: block.readUInt16BE(32) } };
    default:
      return { kind: "invalid", reason: "PROXY v2 header: not a TCP connection" };
  }
}

/** ipv6Text writes 16 bytes as eight hexadecimal groups (not compressed: addressGroup and logs parse either form). */
function ipv6Text(bytes: Buffer): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
  return groups.join(":");
}
