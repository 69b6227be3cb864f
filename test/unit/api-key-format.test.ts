import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { failsChecksum, hasCurrentFormat, modeOfKey, newApiKey } from "../../src/auth/api-key-format.js";
import { authenticate } from "../../src/auth/authenticate.js";
import { createMemoryApiKeyVerifier } from "../../src/auth/memory-api-key-verifier.js";
import type { ApiKeyVerifier } from "../../src/auth/api-key-verifier.js";

describe("API key format", () => {
  it("makes keys of each mode: prefix, 30 base62 characters, a 6-character checksum", () => {
    for (const mode of ["test", "live"] as const) {
      const key = newApiKey(mode);
      assert.match(key, new RegExp(`^sk_${mode}_[0-9A-Za-z]{36}$`));
      assert.equal(hasCurrentFormat(key), true);
      assert.equal(failsChecksum(key), false);
      assert.equal(modeOfKey(key), mode);
    }
  });

  it("makes a different key each time", () => {
    const keys = new Set(Array.from({ length: 200 }, () => newApiKey("test")));
    assert.equal(keys.size, 200);
  });

  it("catches every single-character typo and every swap of neighbours", () => {
    const key = newApiKey("live");
    const body = key.length - 36;
    for (let i = body; i < key.length; i++) {
      const changed = key.slice(0, i) + (key[i] === "a" ? "b" : "a") + key.slice(i + 1);
      assert.equal(failsChecksum(changed), true, `typo at ${i}`);
    }
    for (let i = body; i < key.length - 1; i++) {
      if (key[i] === key[i + 1]) continue;
      const swapped = key.slice(0, i) + key[i + 1] + key[i] + key.slice(i + 2);
      assert.equal(failsChecksum(swapped), true, `swap at ${i}`);
    }
  });

  it("a key changed from test to live (or back) fails its checksum", () => {
    const key = newApiKey("test");
    assert.equal(failsChecksum(key.replace("sk_test_", "sk_live_")), true);
  });

  it("never checksum-checks keys of the earlier formats, and reads their mode from the prefix", () => {
    const older = [
      "sk_live_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde", // npm run keys: 32 bytes of base64url
      "sk_test_AbCdEfGhIjKlMnOpQrStUvWxYz012345", // the demo key: 24 bytes
      "merchant-key-0000000000", // anything API_KEYS took
    ];
    for (const key of older) assert.equal(failsChecksum(key), false, key);
    assert.equal(modeOfKey(older[0]!), "live");
    assert.equal(modeOfKey(older[1]!), "test");
    assert.equal(modeOfKey(older[2]!), "test");
    assert.equal(modeOfKey("sk_livex"), "test");
  });
});

describe("authenticate", () => {
  it("refuses a mistyped key of the current format without asking the verifier", async () => {
    const key = newApiKey("test");
    const principal = { merchantId: "m", merchantName: "m", livemode: false, keyId: "key_1", scopes: [], allowedCidrs: [], expiresAt: null };
    let asked = 0;
    const verifier: ApiKeyVerifier = {
      verify: async () => {
        asked++;
        return principal;
      },
    };
    const typo = key.slice(0, -1) + (key.endsWith("a") ? "b" : "a");
    await assert.rejects(authenticate(`Bearer ${typo}`, verifier), { message: /checksum does not match/ });
    assert.equal(asked, 0);
    assert.deepEqual(await authenticate(`Bearer ${key}`, verifier), principal);
    assert.equal(asked, 1);
  });

  it("gives each principal its key's mode, for keys old and new", async () => {
    const keys = { liveNew: newApiKey("live"), testNew: newApiKey("test"), liveOld: "sk_live_0123456789abcdefghijkl", other: "plain-key-0123456789" };
    const verifier = createMemoryApiKeyVerifier(Object.entries(keys).map(([merchantId, key]) => ({ merchantId, merchantName: merchantId, key })));
    const modes = Object.fromEntries(
      await Promise.all(Object.entries(keys).map(async ([name, key]) => [name, (await authenticate(`Bearer ${key}`, verifier)).livemode] as const)),
    );
    assert.deepEqual(modes, { liveNew: true, testNew: false, liveOld: true, other: false });
  });

  it("accepts a configured key that has the current shape but not its checksum (it predates the format)", async () => {
    const key = "sk_test_" + "A".repeat(36);
    assert.equal(failsChecksum(key), true);
    const verifier = createMemoryApiKeyVerifier([{ merchantId: "m", merchantName: "m", key }]);
    assert.equal((await authenticate(`Bearer ${key}`, verifier)).merchantId, "m");
  });
});
