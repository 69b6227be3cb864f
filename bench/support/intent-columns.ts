import type pg from "pg";

/**
 * The payment_intents columns the bench writes itself (the initial
 * migration's). Later migrations may add columns; extraIntentColumns finds the
 * ones that need a value, so seeding keeps satisfying the schema.
 */
export const knownIntentColumns = [
  "id",
  "merchant_id",
  "amount",
  "total_amount",
  "currency",
  "country",
  "customer_email",
  "receipt_email",
  "status",
  "client_reference",
  "callback_url",
  "transaction",
  "checkout_token",
  "request_fingerprint",
  "created_at",
  "updated_at",
  "deleted_at",
] as const;

/** A later column that is NOT NULL without a default, and the SQL value the bench gives it. */
export interface ExtraColumn {
  name: string;
  /** A constant SQL expression of the column's type. */
  value: string;
  /** A value of the column's type to bind as a parameter instead (relative to the row's creation time). */
  parameter(createdAt: Date): unknown;
}

/**
 * extraIntentColumns lists the NOT NULL columns without a default that the
 * initial migration did not have. Timestamps get a far-future value (an
 * expiry that never falls due during a run), payment_methods the two methods
 * the bench's requests name; any other column stops the bench with a message
 * saying which to teach it.
 */
export async function extraIntentColumns(client: pg.Client | pg.Pool): Promise<ExtraColumn[]> {
  const { rows } = await client.query<{ column_name: string; data_type: string }>(
    `select column_name, data_type from information_schema.columns
     where table_name = 'payment_intents' and is_nullable = 'NO' and column_default is null`,
  );
  const known = new Set<string>(knownIntentColumns);
  return rows
    .filter((row) => !known.has(row.column_name))
    .map((row) => {
      // Two methods, as the bench's create requests ask for.
      if (row.column_name === "payment_methods") {
        return { name: row.column_name, value: "'{card,bank_transfer}'", parameter: () => ["card", "bank_transfer"] };
      }
      if (row.data_type.startsWith("timestamp")) {
        // An expiry (the service's default: a day after creation) that never falls due during a run.
        return {
          name: row.column_name,
          value: "timestamptz '2100-01-01 00:00:00Z'",
          parameter: (createdAt: Date) => new Date(createdAt.getTime() + 24 * 3600 * 1000),
        };
      }
      throw new Error(
        `payment_intents.${row.column_name} (${row.data_type}) is NOT NULL without a default: teach bench/support/intent-columns.ts a value for it`,
      );
    });
}
