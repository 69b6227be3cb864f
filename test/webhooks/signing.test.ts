import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { decodeWebhookSecret, generateWebhookSecret, isWebhookSecret, signWebhook } from "../../src/webhooks/signing.js";
import { liveSecrets, rotateSigningSecrets } from "../../src/domain/signing-secrets.js";

const body = JSON.stringify({ id: "evt_1", type: "payment_intent.succeeded", data: { amount: "50000", note: "naïra ₦ – ok" } });
const now = () => Math.floor(Date.now() / 1000);

/** The receiver's side: standardwebhooks, an independent implementation of the spec. */
function verify(secret: string, headers: Record<string, string>, payload = body): unknown {
  return new Webhook(secret).verify(payload, headers);
}

describe("generateWebhookSecret", () => {
  it("makes whsec_ + base64 of 32 random bytes, different every time", () => {
    const a = generateWebhookSecret();
    const b = generateWebhookSecret();
    assert.match(a, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(decodeWebhookSecret(a).length, 32);
    assert.notEqual(a, b);
    assert.equal(generateWebhookSecret((n) => Buffer.alloc(n, 1)), `whsec_${Buffer.alloc(32, 1).toString("base64")}`);
  });

  it("recognises secrets of 24 to 64 key bytes only", () => {
    const secret = (bytes: number) => `whsec_${Buffer.alloc(bytes, 7).toString("base64")}`;
    for (const [text, ok] of [
      [secret(24), true],
      [secret(64), true],
      [secret(23), false],
      [secret(65), false],
      [secret(32).slice(6), false],
      ["whsec_not base64!", false],
      ["whsec_", false],
    ] as const) {
      assert.equal(isWebhookSecret(text), ok, text);
    }
    assert.throws(() => decodeWebhookSecret("whsec_abc"), /not a webhook secret/);
  });
});

describe("signWebhook", () => {
  it("signs as standardwebhooks verifies, with one secret", () => {
    const secret = generateWebhookSecret();
    const timestamp = now();
    const signature = signWebhook([secret], "evt_1", timestamp, body);
    assert.match(signature, /^v1,[A-Za-z0-9+/]{43}=$/);
    const headers = { "webhook-id": "evt_1", "webhook-timestamp": String(timestamp), "webhook-signature": signature };
    assert.deepEqual(verify(secret, headers), JSON.parse(body));
  });

  it("carries one signature per secret, space-separated, each verifying on its own", () => {
    const current = generateWebhookSecret();
    const previous = generateWebhookSecret();
    const timestamp = now();
    const signature = signWebhook([current, previous], "evt_2", timestamp, body);
    const parts = signature.split(" ");
    assert.equal(parts.length, 2);
    assert.equal(parts[0], signWebhook([current], "evt_2", timestamp, body), "the current secret signs first");
    const headers = { "webhook-id": "evt_2", "webhook-timestamp": String(timestamp), "webhook-signature": signature };
    assert.deepEqual(verify(current, headers), JSON.parse(body));
    assert.deepEqual(verify(previous, headers), JSON.parse(body));
    assert.throws(() => verify(generateWebhookSecret(), headers), WebhookVerificationError);
  });

  it("fails verification when the body, id or timestamp changes", () => {
    const secret = generateWebhookSecret();
    const timestamp = now();
    const headers = { "webhook-id": "evt_3", "webhook-timestamp": String(timestamp), "webhook-signature": signWebhook([secret], "evt_3", timestamp, body) };
    assert.throws(() => verify(secret, headers, body.replace("50000", "50001")), WebhookVerificationError);
    assert.throws(() => verify(secret, { ...headers, "webhook-id": "evt_4" }), WebhookVerificationError);
    assert.throws(() => verify(secret, { ...headers, "webhook-timestamp": String(timestamp - 1) }), WebhookVerificationError);
  });

  it("needs at least one secret and whole seconds", () => {
    assert.throws(() => signWebhook([], "evt_1", now(), body), /at least one secret/);
    assert.throws(() => signWebhook([generateWebhookSecret()], "evt_1", 1.5, body), /whole unix seconds/);
  });
});

describe("signing secrets over a rotation", () => {
  const t0 = new Date("2026-01-01T00:00:00.000Z");
  const hours = (h: number) => new Date(t0.getTime() + h * 3_600_000);

  it("signs with the new and the old secret for 24 hours, then with the new one only", () => {
    const secrets = rotateSigningSecrets([{ secret: "whsec_old", expiresAt: null }], "whsec_new", t0);
    assert.deepEqual(secrets, [
      { secret: "whsec_new", expiresAt: null },
      { secret: "whsec_old", expiresAt: hours(24) },
    ]);
    assert.deepEqual(liveSecrets(secrets, hours(23.99)), ["whsec_new", "whsec_old"]);
    assert.deepEqual(liveSecrets(secrets, hours(24)), ["whsec_new"]);
  });

  it("keeps at most two: a rotation while one is in its grace ends that grace", () => {
    const first = rotateSigningSecrets([{ secret: "whsec_a", expiresAt: null }], "whsec_b", t0);
    const second = rotateSigningSecrets(first, "whsec_c", hours(10));
    assert.deepEqual(second, [
      { secret: "whsec_c", expiresAt: null },
      { secret: "whsec_b", expiresAt: hours(34) },
    ]);
    let many = second;
    for (let i = 0; i < 3000; i++) many = rotateSigningSecrets(many, `whsec_${i}`, hours(11));
    assert.deepEqual(liveSecrets(many, hours(11)), ["whsec_2999", "whsec_2998"]);
  });

  it("takes the replaced secret's grace from 0 (retired at once) to 24 hours, and nothing else", () => {
    assert.deepEqual(rotateSigningSecrets([{ secret: "whsec_a", expiresAt: null }], "whsec_b", t0, 0), [{ secret: "whsec_b", expiresAt: null }]);
    assert.deepEqual(rotateSigningSecrets([{ secret: "whsec_a", expiresAt: null }], "whsec_b", t0, 60_000)[1], {
      secret: "whsec_a",
      expiresAt: new Date(t0.getTime() + 60_000),
    });
    for (const grace of [-1, 24 * 3_600_000 + 1, 0.5]) assert.throws(() => rotateSigningSecrets([], "whsec_b", t0, grace));
  });

  it("signs with at most two live secrets, even when more were stored before the bound", () => {
    const stored = [null, hours(5), hours(6), hours(7)].map((expiresAt, i) => ({ secret: `whsec_${i}`, expiresAt }));
    assert.deepEqual(liveSecrets(stored, t0), ["whsec_0", "whsec_1"]);
  });
});
