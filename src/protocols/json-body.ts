import { invalid } from "../rules/invalid.js";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * parseJsonBody reads a request body as JSON, strictly: it must be valid
 * UTF-8 (RFC 8259 §8.1) and valid JSON, and no object in it may name a key
 * twice (RFC 8259 §4 leaves duplicates to the parser, and JSON.parse keeps the
 * last one silently, so two readers of one body could see two requests).
 * Every failure is InvalidArgument with a fixed message that names no parser
 * internals.
 */
export function parseJsonBody(body: Uint8Array): unknown {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw invalid("request body is not valid UTF-8");
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid(text.trim() === "" ? "request body must be a JSON object" : "request body is not valid JSON");
  }
  // Only an object or array can repeat a key; most bodies are small objects.
  if (typeof value === "object" && value !== null) {
    const duplicate = findDuplicateKey(text);
    if (duplicate !== undefined) throw invalid(`${duplicate} is given more than once`);
  }
  return value;
}

interface Frame {
  /** Keys seen so far; undefined for an array. */
  keys: Set<string> | undefined;
  /** The next string in this object is a key (after "{" or ","). */
  expectKey: boolean;
  /** Position in an array; the key just read in an object. */
  index: number;
  key: string;
}

const quote = 0x22;
const backslash = 0x5c;

/**
 * findDuplicateKey scans JSON text that JSON.parse already accepted and
 * returns the path (`settlementAccounts[1].splitAmount`) of the first key an
 * object repeats, or undefined. It only tracks structure and keys, so it costs
 * one pass over the text and no values are built.
 */
export function findDuplicateKey(text: string): string | undefined {
  const stack: Frame[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === quote) {
      const end = endOfString(text, i);
      const top = stack[stack.length - 1];
      if (top?.keys && top.expectKey) {
        const raw = text.slice(i + 1, end);
        const key = raw.includes("\\") ? (JSON.parse(`"${raw}"`) as string) : raw;
        if (top.keys.has(key)) return pathOf(stack, key);
        top.keys.add(key);
        top.key = key;
        top.expectKey = false;
      }
      i = end;
    } else if (c === 0x7b /* { */) {
      stack.push({ keys: new Set(), expectKey: true, index: 0, key: "" });
    } else if (c === 0x5b /* [ */) {
      stack.push({ keys: undefined, expectKey: false, index: 0, key: "" });
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1]!;
      if (top.keys) top.expectKey = true;
      else top.index++;
    }
  }
  return undefined;
}

/** endOfString returns the index of the quote that closes the string opening at start. */
function endOfString(text: string, start: number): number {
  let i = start + 1;
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === quote) return i;
    i += c === backslash ? 2 : 1;
  }
}

function pathOf(stack: Frame[], key: string): string {
  let path = "";
  for (let depth = 0; depth < stack.length - 1; depth++) {
    const frame = stack[depth]!;
    path = frame.keys ? (path === "" ? frame.key : `${path}.${frame.key}`) : `${path}[${frame.index}]`;
  }
  return path === "" ? key : `${path}.${key}`;
}
