import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createPageTokenCodec, type PageTokenScope } from "../../src/service/page-token.js";

const secret = "0123456789abcdef0123456789abcdef";
const codec = createPageTokenCodec(secret);
const scope: PageTokenScope = { merchantId: "merchantA", query: ["payment_intents", "", ""] };
/** The scope of a payment intent listing with these filters. */
const intents = (filters: { clientReference?: string; status?: string }): PageTokenScope => ({
  merchantId: "merchantA",
  query: ["payment_intents", filters.clientReference ?? "", filters.status ?? ""],
});
const cursor = { createdAt: new Date("2024-05-01T10:00:00.123Z"), id: "pi_0190a1b2-c3d4-7e5f-8a6b-000000000001" };
const base64url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

describe("createPageTokenCodec", () => {
  it("decodes what it encoded, to the millisecond", () => {
    for (const s of [scope, intents({ clientReference: "order-1", status: "pending" })]) {
      assert.deepEqual(codec.decode(codec.encode(cursor, s), s), cursor);
    }
  });

  it("accepts a token from another codec with the same secret", () => {
    const token = createPageTokenCodec(secret).encode(cursor, scope);
    assert.deepEqual(codec.decode(token, scope), cursor);
  });

  it("makes an opaque token: neither the id nor the time reads in clear", () => {
    const token = codec.encode(cursor, scope);
    assert.match(token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    assert.ok(!token.includes(cursor.id));
    assert.ok(!token.includes(String(cursor.createdAt.getTime())));
  });

  it("refuses a token whose payload was replaced by another cursor's", () => {
    const [, mac] = codec.encode(cursor, scope).split(".");
    const forged = Buffer.from(`${cursor.createdAt.getTime()}.pi_someone_else`).toString("base64url");
    assert.equal(codec.decode(`${forged}.${mac}`, scope), undefined);
  });

  it("refuses a token with any one character changed", () => {
    const token = codec.encode(cursor, scope);
    for (let i = 0; i < token.length; i++) {
      if (token[i] === ".") continue;
      for (const replacement of base64url) {
        if (replacement === token[i]) continue;
        const tampered = token.slice(0, i) + replacement + token.slice(i + 1);
        assert.equal(codec.decode(tampered, scope), undefined, `accepted ${tampered} (position ${i})`);
      }
    }
  });

  it("refuses a token with characters added or removed", () => {
    const token = codec.encode(cursor, scope);
    const [payload, mac] = token.split(".") as [string, string];
    const variants = [
      `${token}A`,
      `${token}=`,
      `${token}==`,
      `${token}!`,
      `${payload}.${mac.slice(0, -1)}`,
      `${payload}.${mac.slice(1)}`,
      `${payload.slice(0, -1)}.${mac}`,
      `${payload}A.${mac}`,
      `${payload}.${mac}.${mac}`,
      ` ${token}`,
      `${token} `,
    ];
    for (const variant of variants) assert.equal(codec.decode(variant, scope), undefined, `accepted ${JSON.stringify(variant)}`);
  });

  it("refuses a token issued to another merchant", () => {
    const token = codec.encode(cursor, { ...scope, merchantId: "merchantB" });
    assert.equal(codec.decode(token, scope), undefined);
  });

  const otherFilters: { name: string; issued: { clientReference?: string; status?: string }; used: { clientReference?: string; status?: string } }[] = [
    { name: "a clientReference filter added", issued: {}, used: { clientReference: "order-1" } },
    { name: "the clientReference filter dropped", issued: { clientReference: "order-1" }, used: {} },
    { name: "another clientReference", issued: { clientReference: "order-1" }, used: { clientReference: "order-2" } },
    { name: "a status filter added", issued: {}, used: { status: "pending" } },
    { name: "another status", issued: { status: "pending" }, used: { status: "failed" } },
    { name: "filters swapped between fields", issued: { clientReference: "pending" }, used: { status: "pending" } },
  ];
  for (const { name, issued, used } of otherFilters) {
    it(`refuses a token used with other filters: ${name}`, () => {
      const token = codec.encode(cursor, intents(issued));
      assert.equal(codec.decode(token, intents(used)), undefined);
    });
  }

  it("refuses a token of another resource's listing, whatever its filters", () => {
    const token = codec.encode(cursor, { merchantId: "merchantA", query: ["settlement_accounts"] });
    assert.equal(codec.decode(token, scope), undefined);
    assert.equal(codec.decode(token, { merchantId: "merchantA", query: ["events", "", ""] }), undefined);
  });

  it("refuses a token signed with another secret", () => {
    const token = createPageTokenCodec("fedcba9876543210fedcba9876543210").encode(cursor, scope);
    assert.equal(codec.decode(token, scope), undefined);
  });

  const garbage = ["", ".", "..", "a", "a.", ".a", "a..b", "a.b", "a.b.c", "%%%.%%%", "null", "🙂.🙂", "x".repeat(600), `${"x".repeat(600)}.${"y".repeat(22)}`];
  for (const token of garbage) {
    it(`refuses the garbage token ${JSON.stringify(token.length > 30 ? `${token.slice(0, 20)}…` : token)}`, () => {
      assert.equal(codec.decode(token, scope), undefined);
    });
  }

  it("refuses a token with an empty payload or an empty mac", () => {
    const [payload, mac] = codec.encode(cursor, scope).split(".") as [string, string];
    assert.equal(codec.decode(`.${mac}`, scope), undefined);
    assert.equal(codec.decode(`${payload}.`, scope), undefined);
  });
});
