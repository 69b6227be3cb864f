import assert from "node:assert/strict";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, it } from "node:test";
import { classifyAddress, isPublicAddress, type AddressClass } from "../../src/webhooks/address-class.js";
import { checkEndpointHost, checkEndpointUrl, notPublicMessage } from "../../src/webhooks/endpoint-url.js";
import type { HostResolver } from "../../src/webhooks/host-resolver.js";
import { silentLogger } from "../../src/lib/logger.js";

describe("classifyAddress", () => {
  const table: [string, AddressClass][] = [
    // IPv4
    ["8.8.8.8", "public"],
    ["1.1.1.1", "public"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "this-network"],
    ["10.0.0.1", "private"],
    ["10.255.255.255", "private"],
    ["11.0.0.1", "public"],
    ["100.63.255.255", "public"],
    ["100.64.0.1", "shared"],
    ["100.100.100.200", "shared"], // Alibaba Cloud metadata
    ["100.127.255.255", "shared"],
    ["100.128.0.0", "public"],
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["169.254.169.254", "link-local"], // cloud metadata
    ["169.254.0.1", "link-local"],
    ["172.15.255.255", "public"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["172.32.0.0", "public"],
    ["192.0.0.8", "reserved"],
    ["192.0.2.1", "documentation"],
    ["192.88.99.1", "reserved"],
    ["192.167.255.255", "public"],
    ["192.168.1.1", "private"],
    ["192.169.0.0", "public"],
    ["198.17.255.255", "public"],
    ["198.18.0.1", "benchmarking"],
    ["198.19.255.255", "benchmarking"],
    ["198.20.0.0", "public"],
    ["198.51.100.7", "documentation"],
    ["203.0.113.9", "documentation"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.255", "multicast"],
    ["240.0.0.1", "reserved"],
    ["255.255.255.255", "broadcast"],
    ["223.255.255.255", "public"],
    // IPv6
    ["2606:4700:4700::1111", "public"],
    ["2a00:1450:4001:82a::200e", "public"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["0:0:0:0:0:0:0:1", "loopback"],
    ["[::1]", "loopback"],
    ["::ffff:127.0.0.1", "loopback"], // IPv4-mapped
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:10.1.2.3", "private"],
    ["::ffff:169.254.169.254", "link-local"],
    ["::ffff:8.8.8.8", "public"],
    ["::ffff:0.0.0.0", "unspecified"],
    ["::1.2.3.4", "reserved"], // IPv4-compatible (deprecated)
    ["64:ff9b::8.8.8.8", "public"], // NAT64 to a public address
    ["64:ff9b::a00:1", "private"], // NAT64 to 10.0.0.1
    ["64:ff9b:1::1", "private"],
    ["2002:808:808::1", "public"], // 6to4 of 8.8.8.8
    ["2002:7f00:1::1", "loopback"], // 6to4 of 127.0.0.1
    ["2001:db8::1", "documentation"],
    ["3fff::1", "documentation"],
    ["2001::1", "reserved"], // Teredo
    ["2001:2::1", "benchmarking"],
    ["100::1", "reserved"],
    ["fc00::1", "unique-local"],
    ["fd00:ec2::254", "unique-local"], // AWS metadata over IPv6
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["febf::1", "link-local"],
    ["fec0::1", "private"],
    ["ff02::1", "multicast"],
    ["4000::1", "reserved"], // outside global unicast 2000::/3
    ["1::", "reserved"],
  ];
  for (const [address, kind] of table) {
    it(`${address} is ${kind}`, () => {
      assert.equal(classifyAddress(address), kind);
      assert.equal(isPublicAddress(address), kind === "public");
    });
  }

  it("throws on what is not an IP address", () => {
    for (const text of ["localhost", "1.2.3", "256.0.0.1", "::g", ""]) assert.throws(() => classifyAddress(text), /not an IP address/, text);
  });
});

/** Asserts an InvalidArgument whose message matches. */
function assertInvalid(run: () => unknown, message: RegExp) {
  assert.throws(run, (error: unknown) => error instanceof ConnectError && error.code === Code.InvalidArgument && message.test(error.rawMessage));
}

describe("checkEndpointUrl", () => {
  const strict = { allowPrivate: false };
  const loose = { allowPrivate: true };

  it("accepts absolute https URLs and returns them normalised", () => {
    for (const [input, normalised] of [
      ["https://hooks.example.com/payments", "https://hooks.example.com/payments"],
      ["HTTPS://Hooks.Example.COM:443/a?b=c", "https://hooks.example.com/a?b=c"],
      ["https://hooks.example.com:8443/x", "https://hooks.example.com:8443/x"],
      ["https://bücher.example/hook", "https://xn--bcher-kva.example/hook"],
      ["https://8.8.8.8/hook", "https://8.8.8.8/hook"],
      ["https://[2606:4700::1111]/hook", "https://[2606:4700::1111]/hook"],
    ]) {
      assert.equal(checkEndpointUrl("url", input!, strict).href, normalised, input);
    }
  });

  it("refuses http unless private URLs are allowed", () => {
    assertInvalid(() => checkEndpointUrl("url", "http://hooks.example.com/x", strict), /^url must use https; local receivers need WEBHOOK_ALLOW_PRIVATE_URLS=true/);
    assert.equal(checkEndpointUrl("url", "http://127.0.0.1:8080/x", loose).href, "http://127.0.0.1:8080/x");
  });

  it("refuses IP literals that are not public unless allowed, in every spelling", () => {
    for (const url of [
      "https://127.0.0.1/x",
      "https://2130706433/x", // 127.0.0.1 as one number
      "https://0x7f.1/x",
      "https://[::1]/x",
      "https://[::ffff:127.0.0.1]/x",
      "https://169.254.169.254/latest/meta-data",
      "https://10.0.0.1/x",
      "https://[fd00::1]/x",
      "https://0.0.0.0/x",
    ]) {
      assertInvalid(() => checkEndpointUrl("url", url, strict), /^url's host does not resolve to a public address; local receivers need WEBHOOK_ALLOW_PRIVATE_URLS=true on the service \(development only\)$/);
      assert.ok(checkEndpointUrl("url", url, loose), url);
    }
  });

  // The URL's syntax is the url field's rule, checked before the service runs: test/unit/request-checker.test.ts.
});

const notPublic = notPublicMessage("url");

describe("checkEndpointHost", () => {
  const resolverOf = (answers: Record<string, string[]>): HostResolver => async (host) => {
    const found = answers[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return found.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  const resolve = resolverOf({
    "hooks.example.com": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
    "internal.example.com": ["93.184.215.14", "10.0.0.7"],
    "metadata.example.com": ["169.254.169.254"],
    "v6local.example.com": ["::1"],
    "empty.example.com": [],
  });

  it("accepts a host whose every address is public", async () => {
    await checkEndpointHost("url", new URL("https://hooks.example.com/x"), { allowPrivate: false, resolve });
  });

  it("refuses a host with any non-public address, unless allowed, in one sentence; the address goes to the operator's log", async () => {
    for (const [host, address, reason] of [
      ["internal.example.com", "10.0.0.7", "private address"],
      ["metadata.example.com", "169.254.169.254", "link-local address"],
      ["v6local.example.com", "::1", "loopback address"],
    ] as const) {
      const logged: Record<string, unknown>[] = [];
      const logger = { ...silentLogger, info: (fields: Record<string, unknown>) => void logged.push(fields) };
      await assert.rejects(
        checkEndpointHost("url", new URL(`https://${host}/x`), { allowPrivate: false, resolve, logger }),
        (error: unknown) => error instanceof ConnectError && error.code === Code.InvalidArgument && error.rawMessage === notPublic,
      );
      assert.deepEqual(logged, [{ host, address, reason }]);
      await checkEndpointHost("url", new URL(`https://${host}/x`), { allowPrivate: true, resolve });
    }
  });

  it("refuses a host that does not resolve with the same sentence as an internal one, even when private URLs are allowed", async () => {
    for (const [host, reason] of [
      ["nowhere.example.com", "does not resolve (ENOTFOUND)"],
      ["empty.example.com", "resolves to no address"],
    ] as const) {
      const logged: Record<string, unknown>[] = [];
      const logger = { ...silentLogger, info: (fields: Record<string, unknown>) => void logged.push(fields) };
      await assert.rejects(
        checkEndpointHost("url", new URL(`https://${host}/x`), { allowPrivate: true, resolve, logger }),
        (error: unknown) => error instanceof ConnectError && error.code === Code.InvalidArgument && error.rawMessage === notPublic,
      );
      assert.deepEqual(logged, [{ host, reason }]);
    }
  });

  it("answers Unavailable when the lookup does not finish in time", async () => {
    const hanging: HostResolver = () => new Promise(() => {});
    await assert.rejects(
      checkEndpointHost("url", new URL("https://slow.example.com/x"), { allowPrivate: false, resolve: hanging, timeoutMs: 50 }),
      (error: unknown) =>
        error instanceof ConnectError && error.code === Code.Unavailable && error.rawMessage === "url's host slow.example.com could not be resolved in time; retry later",
    );
  });

  it("leaves IP literals to checkEndpointUrl and never resolves them", async () => {
    let lookups = 0;
    await checkEndpointHost("url", new URL("https://8.8.8.8/x"), { allowPrivate: false, resolve: async () => (lookups++, []) });
    assert.equal(lookups, 0);
  });
});
