import { readFileSync } from "node:fs";

/**
 * readOpenFileLimit is this process's soft RLIMIT_NOFILE (Node raises it to
 * the hard limit at start), read from /proc/self/limits; undefined where that
 * file does not exist (not Linux) or says "unlimited".
 */
export function readOpenFileLimit(path = "/proc/self/limits"): number | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
  const soft = /^Max open files\s+(\d+)\s/m.exec(text)?.[1];
  return soft === undefined ? undefined : Number(soft);
}
