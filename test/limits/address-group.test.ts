import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { addressGroup } from "../../src/limits/address-group.js";

describe("addressGroup", () => {
  const cases: [address: string | undefined, group: string][] = [
    ["192.0.2.1", "192.0.2.1/32"],
    ["192.0.2.255", "192.0.2.255/32"],
    // IPv4 peers of a dual-stack socket: the IPv4 address.
    ["::ffff:192.0.2.1", "192.0.2.1/32"],
    ["::FFFF:c000:0201", "192.0.2.1/32"],
    ["2001:db8:1:2::1", "2001:db8:1:2::/64"],
    ["2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"],
    ["2001:0DB8:0001:0002:0000:0000:0000:0009", "2001:db8:1:2::/64"],
    ["2001:db8::1", "2001:db8:0:0::/64"],
    ["2001:db8:0:0:1::", "2001:db8:0:0::/64"],
    ["::1", "0:0:0:0::/64"],
    ["::", "0:0:0:0::/64"],
    ["fe80::1%eth0", "fe80:0:0:0::/64"],
    ["64:ff9b::192.0.2.1", "64:ff9b:0:0::/64"],
    [undefined, "unknown"],
    ["", "unknown"],
    ["not an address", "unknown"],
    ["192.0.2.1:443", "unknown"],
  ];
  for (const [address, group] of cases) {
    it(`${JSON.stringify(address)} → ${group}`, () => {
      assert.equal(addressGroup(address), group);
    });
  }
});
