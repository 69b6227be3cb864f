import { queryDatabase } from "../../test/support/postgres.js";
import type { LoadSample } from "../support/create-load.js";

/** What became of the creates a load sent, read back with SQL. */
export interface AcknowledgedCheck {
  /** Creates answered 2xx. */
  acknowledged: number;
  /** Of those, not stored, or stored with another id than the one answered. */
  missing: string[];
  /** 2xx answers that were not for the create sent. */
  mismatched: string[];
  /** Rows stored for creates that got no 2xx (the request died after its commit): harmless, counted. */
  storedUnacknowledged: number;
}

/**
 * checkAcknowledged reads back every create of a load: each one answered 2xx
 * must be stored under the id the answer gave. A create that failed may or
 * may not be stored (its answer said so), and is only counted.
 */
export async function checkAcknowledged(databaseUrl: string, merchantId: string, prefix: string, samples: readonly LoadSample[]): Promise<AcknowledgedCheck> {
  const answered = new Map<string, string>();
  const mismatched: string[] = [];
  for (const s of samples) {
    if (s.status < 200 || s.status >= 300) continue;
    const body = JSON.parse(s.body) as { id?: string; clientReference?: string };
    if (body.clientReference !== s.reference || typeof body.id !== "string") mismatched.push(`${s.reference}: ${s.body.slice(0, 120)}`);
    else answered.set(s.reference, body.id);
  }
  const { rows } = await queryDatabase<{ client_reference: string; id: string }>(
    databaseUrl,
    "select client_reference, id from payment_intents where merchant_id = $1 and client_reference like $2",
    [merchantId, `${prefix}-%`],
  );
  const stored = new Map(rows.map((r) => [r.client_reference, r.id]));
  const missing = [...answered].filter(([reference, id]) => stored.get(reference) !== id).map(([reference, id]) => `${reference} (${id})`);
  const storedUnacknowledged = [...stored.keys()].filter((reference) => !answered.has(reference)).length;
  return { acknowledged: answered.size, missing, mismatched, storedUnacknowledged };
}
