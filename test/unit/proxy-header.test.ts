import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseProxyHeader, proxyV2Signature } from "../../src/listener/proxy-header.js";
import { parseTrustedProxies } from "../../src/listener/trusted-proxies.js";

/** v2 builds a version 2 header: command 0 LOCAL / 1 PROXY, family byte, address block. */
function v2(command: number, family: number, block: Buffer, version = 2): Buffer {
  const length = Buffer.alloc(2);
  length.writeUInt16BE(block.length);
  return Buffer.concat([proxyV2Signature, Buffer.from([(version << 4) | command, family]), length, block]);
}
const tcp4Block = Buffer.from([203, 0, 113, 7, 10, 0, 0, 1, 0xc3, 0x50, 0x1f, 0x90]);
const tcp6Block = Buffer.concat([
  Buffer.from("20010db8000100020000000000000007", "hex"),
  Buffer.from("20010db8000000000000000000000001", "hex"),
  Buffer.from([0x04, 0xd2, 0x1f, 0x90]),
]);

describe("parseProxyHeader", () => {
  const cases: { name: string; bytes: Buffer; want: unknown }[] = [
    {
      name: "v1 TCP4",
      bytes: Buffer.from("PROXY TCP4 203.0.113.7 10.0.0.1 50000 8080\r\nGET"),
      want: { kind: "header", version: 1, length: 44, client: { address: "203.0.113.7", port: 50000 } },
    },
    {
      name: "v1 TCP6",
      bytes: Buffer.from("PROXY TCP6 2001:db8::7 2001:db8::1 1234 8080\r\n"),
      want: { kind: "header", version: 1, length: 46, client: { address: "2001:db8::7", port: 1234 } },
    },
    { name: "v1 UNKNOWN", bytes: Buffer.from("PROXY UNKNOWN ffff::1 ::1 1 2\r\n"), want: { kind: "header", version: 1, length: 31, client: undefined } },
    { name: "v1 without its CRLF yet", bytes: Buffer.from("PROXY TCP4 203.0.113.7 10.0"), want: { kind: "incomplete" } },
    { name: "the first bytes of v1", bytes: Buffer.from("PRO"), want: { kind: "incomplete" } },
    { name: "v1 longer than 107 bytes", bytes: Buffer.from(`PROXY UNKNOWN ${"x".repeat(100)}`), want: { kind: "invalid", reason: "PROXY v1 header longer than 107 bytes" } },
    { name: "v1 TCP4 with an IPv6 address", bytes: Buffer.from("PROXY TCP4 2001:db8::7 10.0.0.1 1 2\r\n"), want: { kind: "invalid", reason: "PROXY v1 header: malformed address" } },
    { name: "v1 port out of range", bytes: Buffer.from("PROXY TCP4 203.0.113.7 10.0.0.1 65536 2\r\n"), want: { kind: "invalid", reason: "PROXY v1 header: malformed port" } },
    { name: "v1 port with a leading zero", bytes: Buffer.from("PROXY TCP4 203.0.113.7 10.0.0.1 080 2\r\n"), want: { kind: "invalid", reason: "PROXY v1 header: malformed port" } },
    { name: "v1 with two spaces", bytes: Buffer.from("PROXY TCP4  203.0.113.7 10.0.0.1 1 2\r\n"), want: { kind: "invalid", reason: "PROXY v1 header: wrong number of fields" } },
    { name: "v1 UDP", bytes: Buffer.from("PROXY UDP4 203.0.113.7 10.0.0.1 1 2\r\n"), want: { kind: "invalid", reason: "PROXY v1 header: unknown protocol" } },
    {
      name: "v2 PROXY TCP4",
      bytes: v2(1, 0x11, tcp4Block),
      want: { kind: "header", version: 2, length: 28, client: { address: "203.0.113.7", port: 50000 } },
    },
    {
      name: "v2 PROXY TCP6, with a TLV after the addresses",
      bytes: v2(1, 0x21, Buffer.concat([tcp6Block, Buffer.from([0x04, 0x00, 0x01, 0x00])])),
      want: { kind: "header", version: 2, length: 56, client: { address: "2001:db8:1:2:0:0:0:7", port: 1234 } },
    },
    { name: "v2 LOCAL (a health check)", bytes: v2(0, 0x00, Buffer.alloc(0)), want: { kind: "header", version: 2, length: 16, client: undefined } },
    { name: "v2 PROXY UNSPEC", bytes: v2(1, 0x00, Buffer.alloc(0)), want: { kind: "header", version: 2, length: 16, client: undefined } },
    { name: "v2 signature only", bytes: proxyV2Signature, want: { kind: "incomplete" } },
    { name: "v2 address block not all there", bytes: v2(1, 0x11, tcp4Block).subarray(0, 20), want: { kind: "incomplete" } },
    { name: "v2 version 1", bytes: v2(1, 0x11, tcp4Block, 1), want: { kind: "invalid", reason: "PROXY v2 header: unsupported version" } },
    { name: "v2 command 2", bytes: v2(2, 0x11, tcp4Block), want: { kind: "invalid", reason: "PROXY v2 header: unknown command" } },
    { name: "v2 UDP", bytes: v2(1, 0x12, tcp4Block), want: { kind: "invalid", reason: "PROXY v2 header: not a TCP connection" } },
    { name: "v2 TCP4 block too short", bytes: v2(1, 0x11, tcp4Block.subarray(0, 8)), want: { kind: "invalid", reason: "PROXY v2 header: address block too short" } },
    {
      name: "v2 announcing 65535 bytes (refused before any of them is read)",
      bytes: Buffer.concat([proxyV2Signature, Buffer.from([0x21, 0x11, 0xff, 0xff])]),
      want: { kind: "invalid", reason: "PROXY v2 header: address block too large" },
    },
    { name: "an HTTP request", bytes: Buffer.from("GET / HTTP/1.1\r\n"), want: { kind: "invalid", reason: "no PROXY header" } },
  ];
  for (const { name, bytes, want } of cases) {
    it(name, () => assert.deepEqual(parseProxyHeader(bytes), want));
  }
});

describe("parseTrustedProxies", () => {
  it("matches addresses inside the CIDR blocks and single addresses, IPv4-mapped peers as IPv4", () => {
    const trusted = parseTrustedProxies("10.0.0.0/8, 192.0.2.7,fd00::/8");
    for (const address of ["10.1.2.3", "::ffff:10.9.9.9", "192.0.2.7", "fd12::1"]) assert.equal(trusted.trusts(address), true, address);
    for (const address of ["11.0.0.1", "192.0.2.8", "fe80::1", "2001:db8::1", "not an address"]) assert.equal(trusted.trusts(address), false, address);
  });

  it("refuses what is not an address or CIDR block", () => {
    for (const text of ["10.0.0.0/33", "10.0.0.0/8/1", "example.com", "::/129", "10.0.0.0/x"]) {
      assert.throws(() => parseTrustedProxies(text), /is not an address or CIDR block/, text);
    }
  });
});
