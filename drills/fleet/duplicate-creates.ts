import { queryDatabase } from "../../test/support/postgres.js";
import { statusCounts } from "../support/create-load.js";
import type { DrillReport } from "../support/drill-report.js";
import type { Fleet } from "../support/fleet.js";

export interface DuplicateCreatesOptions {
  references: number;
  /** Identical creates sent at once per reference. */
  copies: number;
  /** References in flight at once (each with all its copies). */
  batch: number;
}

/**
 * runDuplicateCreates sends, for each reference, `copies` identical creates
 * at once through HAProxy, so they spread over the three instances: each
 * reference must end as one row, answered 201 once and 200 (the same intent)
 * for every other copy, never a 5xx.
 */
export async function runDuplicateCreates(fleet: Fleet, options: DuplicateCreatesOptions): Promise<DrillReport> {
  const prefix = `dup-${Date.now()}`;
  const started = performance.now();
  const answers: { reference: string; status: number; id?: string; error?: string }[] = [];
  for (let first = 0; first < options.references; first += options.batch) {
    const references = Array.from({ length: Math.min(options.batch, options.references - first) }, (_, i) => `${prefix}-${first + i}`);
    await Promise.all(
      references.flatMap((reference, r) =>
        Array.from({ length: options.copies }, async () => {
          try {
            const res = await fetch(`${fleet.haproxy.httpUrl}/v1/v2/payment-intents`, {
              method: "POST",
              headers: { authorization: `Bearer ${fleet.merchant.key}`, "content-type": "application/json" },
              body: JSON.stringify({ amount: 1000 + first + r, customerEmail: "ada@example.com", clientReference: reference, paymentMethod: ["card", "ussd"] }),
              signal: AbortSignal.timeout(30_000),
            });
            const body = (await res.json()) as { id?: string };
            answers.push({ reference, status: res.status, id: body.id });
          } catch (error) {
            answers.push({ reference, status: 0, error: String(error) });
          }
        }),
      ),
    );
  }
  const seconds = (performance.now() - started) / 1000;
  const byReference = new Map<string, { created: number; ids: Set<string | undefined> }>();
  for (const a of answers) {
    const entry = byReference.get(a.reference) ?? { created: 0, ids: new Set() };
    if (a.status === 201) entry.created++;
    entry.ids.add(a.id);
    byReference.set(a.reference, entry);
  }
  const notOne201 = [...byReference.values()].filter((e) => e.created !== 1).length;
  const split = [...byReference.values()].filter((e) => e.ids.size !== 1).length;
  const other = answers.filter((a) => a.status !== 200 && a.status !== 201).length;
  const { rows } = await queryDatabase<{ rows: string; refs: string }>(
    fleet.db.url,
    "select count(*) as rows, count(distinct client_reference) as refs from payment_intents where client_reference like $1",
    [`${prefix}-%`],
  );
  const stored = Number(rows[0]!.rows);
  const passed = stored === options.references && Number(rows[0]!.refs) === options.references && notOne201 === 0 && split === 0 && other === 0;
  return {
    name: "Fleet: concurrent identical creates",
    did: `${options.references} client references × ${options.copies} identical creates sent at once through HAProxy (round robin over three instances on PgBouncer), ${options.batch} references at a time`,
    headline: `${stored} rows for ${options.references} references; references without exactly one 201: ${notOne201}; answered with more than one id: ${split}; other answers: ${other}`,
    figures: [`answers: ${statusCounts(answers)} in ${seconds.toFixed(1)} s`],
    passed,
  };
}
