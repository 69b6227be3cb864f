import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { describeTableActivity, tableActivityPer, type TableCounters } from "../support/table-activity.js";

const counters = (over: Partial<TableCounters> = {}): TableCounters => ({
  seqScans: 0,
  seqRows: 0,
  indexScans: 0,
  inserted: 0,
  updated: 0,
  deleted: 0,
  ...over,
});

describe("tableActivityPer", () => {
  it("divides each table's change by the count, counts a new table whole, leaves idle tables out, sequential reads first", () => {
    const before = new Map([
      ["payment_intents", counters({ indexScans: 100, updated: 10 })],
      ["merchants", counters({ indexScans: 7 })],
    ]);
    const after = new Map([
      ["payment_intents", counters({ indexScans: 300, updated: 210 })],
      ["merchants", counters({ indexScans: 7 })],
      ["payment_attempts", counters({ seqScans: 4, seqRows: 4000, inserted: 100 })],
    ]);
    assert.deepEqual(tableActivityPer(before, after, 100), [
      { table: "payment_attempts", seqScans: 0.04, seqRows: 40, indexScans: 0, inserted: 1, updated: 0, deleted: 0 },
      { table: "payment_intents", seqScans: 0, seqRows: 0, indexScans: 2, inserted: 0, updated: 2, deleted: 0 },
    ]);
  });

  it("describes each table in one clause, only what it did", () => {
    const text = describeTableActivity(
      tableActivityPer(new Map(), new Map([["events", counters({ seqScans: 1, seqRows: 1234, indexScans: 2, inserted: 2 })]]), 1),
    );
    assert.equal(text, "events 1.0 sequential scans (1,234 rows), 2.0 index scans, 2.0 inserted");
  });
});
