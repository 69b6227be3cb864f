import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createClientNetworks, createClientNetworksCache, networksWithin, parseCidr } from "../../src/auth/client-networks.js";
import { holdsScope } from "../../src/auth/scopes.js";

describe("parseCidr", () => {
  it("reads IPv4 and IPv6 networks and bare addresses, and refuses anything else", () => {
    assert.deepEqual(parseCidr("203.0.113.0/24"), { address: "203.0.113.0", prefix: 24, type: "ipv4" });
    assert.deepEqual(parseCidr("2001:db8::/32"), { address: "2001:db8::", prefix: 32, type: "ipv6" });
    assert.deepEqual(parseCidr("198.51.100.7"), { address: "198.51.100.7", prefix: 32, type: "ipv4" });
    for (const bad of ["10.0.0.0/33", "2001:db8::/129", "10.0.0.0/", "10.0.0.0/08", "10.0.0/8", "10.0.0.0/8/8", "example.com/8", "", "/8"]) {
      assert.equal(parseCidr(bad), undefined, bad);
    }
  });
});

describe("createClientNetworks", () => {
  const networks = createClientNetworks(["203.0.113.0/24", "2001:db8::/32"]);
  const table: [string | undefined, boolean][] = [
    ["203.0.113.7", true],
    ["::ffff:203.0.113.7", true],
    ["203.0.114.7", false],
    ["2001:db8::1", true],
    ["2001:db9::1", false],
    ["127.0.0.1", false],
    [undefined, false],
    ["not an address", false],
  ];
  for (const [address, allowed] of table) {
    it(`${allowed ? "allows" : "refuses"} ${String(address)}`, () => assert.equal(networks.allows(address), allowed));
  }
  it("allows every address when there are no networks", () => {
    assert.equal(createClientNetworks([]).allows(undefined), true);
  });
  it("compiles a list once, through the cache", () => {
    const of = createClientNetworksCache(2);
    assert.equal(of(["10.0.0.0/8"]), of(["10.0.0.0/8"]));
    assert.equal(of(["10.0.0.0/8"]).allows("10.1.2.3"), true);
  });
});

describe("networksWithin (what a key held to networks may give a key it makes)", () => {
  const office = ["203.0.113.0/24", "2001:db8::/32"];
  for (const [inner, within] of [
    [["203.0.113.0/24"], true],
    [["203.0.113.128/25", "2001:db8:1::/48"], true],
    [["203.0.113.7"], true],
    [["203.0.113.7/32", "2001:db8::1"], true],
    [["203.0.112.0/23"], false],
    [["203.0.114.0/24"], false],
    [["0.0.0.0/0"], false],
    [["2001:db9::/32"], false],
    [["::ffff:203.0.113.7/128"], false],
    [[], false],
  ] as const) {
    it(`${within ? "takes" : "refuses"} ${inner.length ? inner.join(", ") : "anywhere"} inside ${office.join(", ")}`, () =>
      assert.equal(networksWithin(inner, office), within));
  }
  it("lets a key for anywhere give any networks, or none", () => {
    assert.equal(networksWithin([], []), true);
    assert.equal(networksWithin(["10.0.0.0/8"], []), true);
  });
});

describe("holdsScope", () => {
  it("gives a key with no scopes every scope, and :write its :read", () => {
    assert.equal(holdsScope([], "refunds:write"), true);
    assert.equal(holdsScope(["refunds:write"], "refunds:read"), true);
    assert.equal(holdsScope(["refunds:read"], "refunds:write"), false);
    assert.equal(holdsScope(["refunds:write"], "payment_intents:read"), false);
  });
});
