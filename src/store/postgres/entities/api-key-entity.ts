import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/** An API key of a merchant, stored as its SHA-256 only; revoked keys are kept for audit. */
export const ApiKeyEntity = defineEntity({
  name: "ApiKey",
  tableName: "api_keys",
  properties: {
    id: p.string().primary(),
    merchantId: p.string(),
    keyHash: p.string(),
    /** The first characters of the key, so an operator can tell keys apart. */
    keyPrefix: p.string(),
    createdAt: p.datetime(),
    revokedAt: p.datetime().nullable(),
  },
});

export type ApiKeyRow = InferEntity<typeof ApiKeyEntity>;
