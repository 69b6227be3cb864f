import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const pages = ["README.md", ...readdirSync(path.join(repoRoot, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)];

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, "")
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(path.join(repoRoot, file), "utf8").replace(/```[\s\S]*?```/g, "");
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of text.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(heading!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

describe("README.md and docs/: every relative link works", () => {
  for (const page of pages) {
    it(page, () => {
      // Code blocks and inline code spans hold no links (a regex there can look like one).
      const text = readFileSync(path.join(repoRoot, page), "utf8").replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
      const broken: string[] = [];
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target!)) continue;
        const [file, anchor] = target!.split("#") as [string, string | undefined];
        const resolved = file === "" ? page : path.posix.join(path.posix.dirname(page), file);
        if (!existsSync(path.join(repoRoot, resolved))) broken.push(`${target}: no file ${resolved}`);
        else if (anchor !== undefined && resolved.endsWith(".md") && !anchorsOf(resolved).has(anchor)) broken.push(`${target}: no heading #${anchor} in ${resolved}`);
      }
      assert.deepEqual(broken, []);
    });
  }
});
