import { closeSync, existsSync, openSync, readFileSync, writeSync } from "node:fs";

/**
 * One line of the test processor's journal: a held attempt's new state, a
 * charge, a refund's outcome, or a payment's refunded total. Amounts are
 * decimal strings (kobo), as JSON has no bigint.
 */
export type JournalEntry =
  | { kind: "attempt"; key: string; held: Record<string, unknown> }
  | { kind: "charge"; key: string }
  | { kind: "refund"; key: string; outcome: Record<string, unknown> }
  | { kind: "refunded"; payment: string; amount: string };

/** TestProcessorJournal is where a test processor keeps what it did, so a kill -9 of its process loses none of it. */
export interface TestProcessorJournal {
  /** Everything written before, oldest first (a torn last line, from a kill mid-write, is left out). */
  readonly entries: readonly JournalEntry[];
  /** Appends one entry; it is in the file (the kernel's page cache) when this returns. */
  append(entry: JournalEntry): void;
  close(): void;
}

/**
 * openTestProcessorJournal opens (or creates) the journal at path
 * (TEST_PROCESSOR_JOURNAL): JSON lines, each written with one write(2), so
 * the processor's charges and settlements survive the kill of the process
 * that made them, and a drill can count them from outside (chargesInJournal).
 * Only the test-mode processor uses it: a real processor keeps its own books.
 */
export function openTestProcessorJournal(path: string): TestProcessorJournal {
  const entries = readJournal(path);
  const fd = openSync(path, "a");
  let open = true;
  return {
    entries,
    append(entry) {
      if (open) writeSync(fd, `${JSON.stringify(entry)}\n`);
    },
    close() {
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
}

/** readJournal reads every whole entry of the journal at path; none when it does not exist. */
export function readJournal(path: string): JournalEntry[] {
  if (!existsSync(path)) return [];
  const entries: JournalEntry[] = [];
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line === "") continue;
    try {
      entries.push(JSON.parse(line) as JournalEntry);
    } catch {
      // A line cut short by a kill mid-write: what it said never happened.
    }
  }
  return entries;
}

/** chargesInJournal counts the charges per attempt key that the journal at path records (a drill's "charged twice" check). */
export function chargesInJournal(path: string): Map<string, number> {
  const charges = new Map<string, number>();
  for (const entry of readJournal(path)) if (entry.kind === "charge") charges.set(entry.key, (charges.get(entry.key) ?? 0) + 1);
  return charges;
}
