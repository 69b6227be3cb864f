import type { EventType } from "../../domain/event.js";
import type { DeliveryAttempt, DeliveryStatus, DisabledReason } from "../delivery-queue.js";
import { SecretBoxError, type SecretBox } from "../../lib/secret-box.js";
import type { SigningSecret } from "../../domain/signing-secrets.js";
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from "../webhook-endpoint-store.js";
import { epochMs, parseEpochMs } from "./sql-values.js";

/**
 * How webhook endpoints and deliveries are stored and read: the columns by
 * position (endpointColumns with readEndpoint, deliveryColumns with
 * readDelivery) and the JSON of secrets and attempts.
 */

type Row = readonly (string | null)[];

/** An endpoint's columns as the API shows it (never its secrets), alias t. */
export function endpointColumns(t: string): string {
  return [
    `${t}.id`,
    `${t}.merchant_id`,
    `${t}.url`,
    `array_to_json(${t}.event_types)`,
    `${t}.description`,
    `${t}.status`,
    `${t}.disabled_reason`,
    epochMs(`${t}.created_at`),
    epochMs(`${t}.updated_at`),
    `${t}.livemode`,
  ].join(", ");
}

export function readEndpoint(row: Row, start = 0): WebhookEndpointRecord {
  return {
    id: row[start]!,
    merchantId: row[start + 1]!,
    url: row[start + 2]!,
    eventTypes: JSON.parse(row[start + 3]!) as EventType[],
    description: row[start + 4] ?? null,
    status: row[start + 5] as "enabled" | "disabled",
    disabledReason: (row[start + 6] ?? null) as DisabledReason | null,
    createdAt: parseEpochMs(row[start + 7]!),
    updatedAt: parseEpochMs(row[start + 8]!),
    livemode: row[start + 9] === "t",
  };
}

/** A delivery's columns with its event's type, alias d for the delivery and ev for its event. */
export const deliveryColumns = [
  "d.id",
  "d.event_id",
  "ev.type",
  "d.endpoint_id",
  "d.status",
  "d.attempts",
  epochMs("d.next_attempt_at"),
  epochMs("d.created_at"),
  epochMs("d.updated_at"),
].join(", ");

export function readDelivery(row: Row): WebhookDeliveryRecord {
  return {
    id: row[0]!,
    eventId: row[1]!,
    eventType: row[2] as EventType,
    endpointId: row[3]!,
    status: row[4] as DeliveryStatus,
    attempts: parseAttempts(row[5]!),
    nextAttemptAt: row[6] === null ? null : parseEpochMs(row[6]!),
    createdAt: parseEpochMs(row[7]!),
    updatedAt: parseEpochMs(row[8]!),
  };
}

/** An attempt as stored in the attempts array (times as epoch ms). */
interface StoredAttempt {
  at: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}

/** One attempt as the JSON appended to a delivery's attempts. */
export function attemptJson(attempt: DeliveryAttempt): string {
  const stored: StoredAttempt = {
    at: attempt.at.getTime(),
    statusCode: attempt.statusCode,
    durationMs: attempt.durationMs,
    error: attempt.error,
  };
  return JSON.stringify([stored]);
}

export function parseAttempts(text: string): DeliveryAttempt[] {
  return (JSON.parse(text) as StoredAttempt[]).map((a) => ({ at: new Date(a.at), statusCode: a.statusCode, durationMs: a.durationMs, error: a.error }));
}

/** A secret as stored in the secrets array: sealed (SecretBox, bound to the endpoint id). */
interface StoredSecret {
  secret: string;
  expiresAt: number | null;
}

/** The secrets column's JSON: each secret sealed for the endpoint. */
export function sealSecrets(box: SecretBox, endpointId: string, secrets: readonly SigningSecret[]): string {
  const stored: StoredSecret[] = secrets.map((s) => ({ secret: box.seal(s.secret, endpointId), expiresAt: s.expiresAt?.getTime() ?? null }));
  return JSON.stringify(stored);
}

/**
 * The secrets a stored column holds, opened. A secret that cannot be opened
 * (the key that sealed it is gone) cannot sign and is left out: a rotation
 * replaces it (README, Secrets and rotation).
 */
export function openSecrets(box: SecretBox, endpointId: string, text: string): SigningSecret[] {
  const opened: SigningSecret[] = [];
  for (const s of JSON.parse(text) as StoredSecret[]) {
    try {
      opened.push({ secret: box.open(s.secret, endpointId), expiresAt: s.expiresAt === null ? null : new Date(s.expiresAt) });
    } catch (error) {
      if (!(error instanceof SecretBoxError)) throw error;
    }
  }
  return opened;
}
