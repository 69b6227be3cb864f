import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { createSecretBox, parseSecretKey, SecretBoxError } from "../../src/lib/secret-box.js";

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

describe("createSecretBox", () => {
  it("round-trips a secret through AES-256-GCM, never storing it readable", () => {
    const box = createSecretBox({ key: randomBytes(32) });
    assert.equal(box.encrypts, true);
    const stored = box.seal(secret, "we_1");
    assert.match(stored, /^v1:[0-9a-f]{8}:[A-Za-z0-9_-]+$/);
    assert.ok(!stored.includes(secret.slice(6, 20)));
    assert.notEqual(box.seal(secret, "we_1"), stored, "a fresh nonce every time");
    assert.equal(box.open(stored, "we_1"), secret);
  });

  it("stores behind a plain marker without a key, and still opens those values once a key is set", () => {
    const plainBox = createSecretBox();
    assert.equal(plainBox.encrypts, false);
    const stored = plainBox.seal(secret, "we_1");
    assert.equal(stored, `plain:${secret}`);
    assert.equal(plainBox.open(stored, "we_1"), secret);
    assert.equal(createSecretBox({ key: randomBytes(32) }).open(stored, "we_1"), secret);
  });

  it("refuses a wrong key, a missing key, a tampered value and another endpoint's value, naming the problem", () => {
    const key = randomBytes(32);
    const stored = createSecretBox({ key }).seal(secret, "we_1");
    const cases: [string, () => unknown, RegExp][] = [
      ["wrong key", () => createSecretBox({ key: randomBytes(32) }).open(stored, "we_1"), /encrypted with another WEBHOOK_SECRET_KEY/],
      ["no key", () => createSecretBox().open(stored, "we_1"), /WEBHOOK_SECRET_KEY is not set/],
      ["other endpoint", () => createSecretBox({ key }).open(stored, "we_2"), /failed authentication/],
      ["tampered", () => createSecretBox({ key }).open(flipLastByte(stored), "we_1"), /failed authentication/],
      ["truncated", () => createSecretBox({ key }).open(stored.slice(0, 20), "we_1"), /truncated/],
      ["unknown format", () => createSecretBox({ key }).open(`v2:${stored.slice(3)}`, "we_1"), /unknown format/],
    ];
    for (const [name, open, message] of cases) {
      assert.throws(open, (error: unknown) => {
        assert.ok(error instanceof SecretBoxError, name);
        assert.match(error.message, message, name);
        assert.ok(!error.message.includes(secret), name);
        return true;
      });
    }
  });

  it("opens values sealed under a previous key after a key rotation", () => {
    const old = randomBytes(32);
    const stored = createSecretBox({ key: old }).seal(secret, "we_1");
    const rotated = createSecretBox({ key: randomBytes(32), previousKeys: [old] });
    assert.equal(rotated.open(stored, "we_1"), secret);
    assert.notEqual(rotated.seal(secret, "we_1").split(":")[1], stored.split(":")[1], "new values name the new key");
  });
});

describe("parseSecretKey", () => {
  it("reads 32 bytes as hex or base64 and refuses anything else without echoing it", () => {
    const key = randomBytes(32);
    assert.deepEqual(parseSecretKey(key.toString("hex")), key);
    assert.deepEqual(parseSecretKey(key.toString("base64")), key);
    assert.deepEqual(parseSecretKey(key.toString("base64url")), key);
    for (const bad of ["", "abc", randomBytes(16).toString("hex"), randomBytes(31).toString("base64"), randomBytes(33).toString("base64")]) {
      assert.throws(() => parseSecretKey(bad), (error: unknown) => error instanceof SecretBoxError && !error.message.includes(bad || "\u0000"));
    }
  });
});

function flipLastByte(stored: string): string {
  const [version, id, payload] = stored.split(":");
  const bytes = Buffer.from(payload!, "base64url");
  bytes[bytes.length - 1]! ^= 1;
  return `${version}:${id}:${bytes.toString("base64url")}`;
}
