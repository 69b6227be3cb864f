import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { readOpenFileLimit } from "../../src/listener/open-file-limit.js";

/** A /proc/<pid>/limits file with the given open files line. */
function limitsFile(openFiles: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "limits-")), "limits");
  writeFileSync(
    path,
    [
      "Limit                     Soft Limit           Hard Limit           Units     ",
      "Max processes             63438                63438                processes ",
      `Max open files            ${openFiles} files     `,
      "Max locked memory         8388608              8388608              bytes     ",
    ].join("\n"),
  );
  return path;
}

describe("readOpenFileLimit", () => {
  it("reads the soft limit, not the hard one", () => {
    assert.equal(readOpenFileLimit(limitsFile("1024                 524288              ")), 1024);
  });

  it("is undefined when unlimited or when the file is missing (not Linux)", () => {
    assert.equal(readOpenFileLimit(limitsFile("unlimited            unlimited           ")), undefined);
    assert.equal(readOpenFileLimit("/nonexistent/limits"), undefined);
  });

  it("reads this process's own limit on Linux", () => {
    if (process.platform !== "linux") return;
    const limit = readOpenFileLimit();
    assert.ok(limit !== undefined && limit >= 256, String(limit));
  });
});
