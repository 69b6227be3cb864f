import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ApiKeySchema, ApiKeyWithSecretSchema } from "../../gen/payments/v2/api_keys_pb.js";
import type { ApiKeyRecord } from "../domain/api-key.js";
import { timestamp } from "./payment-intent-presenter.js";

/** apiKeyMessage is a key as listed: never its secret (only a hash is stored). */
export function apiKeyMessage(record: ApiKeyRecord): Omit<MessageInitShape<typeof ApiKeySchema>, "$typeName"> {
  return {
    id: record.id,
    name: record.name || undefined,
    mode: record.mode,
    scopes: [...record.scopes],
    last4: record.last4 || undefined,
    createdAt: timestamp(record.createdAt),
    lastUsedAt: record.lastUsedAt ? timestamp(record.lastUsedAt) : undefined,
    expiresAt: record.expiresAt ? timestamp(record.expiresAt) : undefined,
    allowedCidrs: [...record.allowedCidrs],
  };
}

/** apiKeyWithSecret is the answer to a creation or a roll, the one time the key is shown. */
export function apiKeyWithSecret(record: ApiKeyRecord, secret: string): MessageInitShape<typeof ApiKeyWithSecretSchema> {
  return { ...apiKeyMessage(record), secret };
}
