import { randomBytes } from "node:crypto";
import { createTestDatabase, queryDatabase } from "../test/support/postgres.js";
import { startServerProcess, type ServerProcess } from "../test/support/server-process.js";
import { drillServerEnv, newDrillKey } from "./support/process-target.js";
import type { DrillReport } from "./support/drill-report.js";

export interface DuplicateStormOptions {
  creates: number;
  references: number;
}

/**
 * runDuplicateStorm: two server processes on one fresh database receive
 * `creates` concurrent identical-per-reference creates spread over
 * `references` client references, alternating between the processes. The
 * database's unique constraint must leave exactly one intent per reference:
 * one 201 each, 200 replays of the same intent for the rest, never a 5xx.
 */
export async function runDuplicateStorm(options: DuplicateStormOptions): Promise<DrillReport> {
  const db = await createTestDatabase();
  const merchant = { id: "storm", key: newDrillKey() };
  const servers: ServerProcess[] = [];
  try {
    const env = { ...drillServerEnv, PAGE_TOKEN_SECRET: randomBytes(32).toString("base64url") };
    // Started together on an empty database, as a rolling deploy does: both migrate at start.
    servers.push(
      ...(await Promise.all([0, 1].map(() => startServerProcess({ databaseUrl: db.url, apiKeys: `${merchant.id}:${merchant.key}`, env })))),
    );
    const started = performance.now();
    const replies = await Promise.all(
      Array.from({ length: options.creates }, async (_, i) => {
        const n = i % options.references;
        try {
          const res = await fetch(`${servers[i % 2]!.url}/v1/v2/payment-intents`, {
            method: "POST",
            headers: { authorization: `Bearer ${merchant.key}`, "content-type": "application/json" },
            body: JSON.stringify({ amount: 1000 + n, customerEmail: "ada@example.com", clientReference: `storm-${n}`, paymentMethod: ["card"] }),
            signal: AbortSignal.timeout(30_000),
          });
          const body = (await res.json()) as { id?: string };
          return { n, status: res.status, id: body.id };
        } catch (error) {
          return { n, status: 0, id: undefined, error: String(error) };
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;

    const byStatus: Record<number, number> = {};
    for (const r of replies) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
    const idsPerReference = new Map<number, Set<string | undefined>>();
    for (const r of replies) idsPerReference.set(r.n, (idsPerReference.get(r.n) ?? new Set()).add(r.id));
    const split = [...idsPerReference.values()].filter((ids) => ids.size !== 1).length;
    const { rows } = await queryDatabase<{ intents: string; refs: string }>(
      db.url,
      "select count(*) as intents, count(distinct client_reference) as refs from payment_intents where merchant_id = $1",
      [merchant.id],
    );
    const intents = Number(rows[0]!.intents);
    const fiveHundreds = replies.filter((r) => r.status >= 500 || r.status === 0).length;
    const alive = servers.every((s) => s.child.exitCode === null && s.child.signalCode === null);
    const passed =
      intents === options.references &&
      byStatus[201] === options.references &&
      byStatus[200] === options.creates - options.references &&
      fiveHundreds === 0 &&
      split === 0 &&
      alive;
    return {
      name: "Duplicate storm",
      did: `${options.creates} concurrent creates over ${options.references} client references (identical body per reference), alternating between 2 server processes on one fresh database`,
      headline: `${intents} intents for ${options.references} references, ${byStatus[201] ?? 0}×201 + ${byStatus[200] ?? 0}×200, ${fiveHundreds} 5xx`,
      figures: [
        `${intents} intents stored for ${options.references} references; answers ${Object.entries(byStatus)
          .map(([s, n]) => `${s === "0" ? "no answer" : s}×${n}`)
          .join(", ")}; references answered with more than one id: ${split}; 5xx or no answer: ${fiveHundreds}; both processes alive: ${alive}; ${seconds.toFixed(1)} s`,
      ],
      passed,
    };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await db.drop();
  }
}
