import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { startServerProcess, type ServerProcess } from "../support/server-process.js";
import { shellCommands, type ShellCommand } from "../support/shell-words.js";
import { startReceiver, type Receiver } from "../webhooks/support/receiver.js";

/**
 * The commands a newcomer copies from README.md and docs/ run as printed
 * against a server started as they say (`npm start`: the demo key from its
 * banner in $KEY), in the order printed, on one merchant, so a page whose
 * second step would be a 409, a 404 or a wrong route fails here. Only the port
 * (`8080` → the test server's) and the ids a page must elide (`pi_…`,
 * `sa_…`, `rf_…`, `evt_…`, `we_…`, `pageToken=…`) are filled in, from the
 * answers of the commands before; a refund example's `pi_…` is a paid intent
 * (the pages say to pay first; the test pays through the test helpers, as the
 * customer's card would).
 */

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const printedOrigin = "http://127.0.0.1:8080";
/**
 * The pages' webhook receiver, which a reader replaces with their own: this
 * machine resolves no public names, so a local receiver stands in (local
 * receivers work in the sandbox, which is what npm start runs).
 */
const printedReceiver = "https://shop.example.com/webhooks";

interface Block {
  page: string;
  /** The line of the opening fence. */
  line: number;
  text: string;
}

function shellBlocks(page: string): Block[] {
  const text = readFileSync(path.join(repoRoot, page), "utf8");
  const blocks: Block[] = [];
  for (const match of text.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    blocks.push({ page, line: text.slice(0, match.index).split("\n").length, text: match[1]! });
  }
  return blocks;
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], timeoutMs = 20_000): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: repoRoot, timeout: timeoutMs, killSignal: "SIGTERM", maxBuffer: 4 << 20 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : error.killed ? -1 : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** The JSON body of curl's output (after the headers, with -i). */
function jsonBody(stdout: string): unknown {
  const start = stdout.search(/^[{[]/m);
  if (start < 0) return undefined;
  try {
    return JSON.parse(stdout.slice(start));
  } catch {
    return undefined;
  }
}

/** A session: the ids seen so far, by prefix, for the elided ids of later commands. */
function createSession(server: ServerProcess, key: string, receiverOrigin: string) {
  const seen = new Map<string, string>();
  let nextPageToken = "";
  const remember = (body: unknown) => {
    if (!body || typeof body !== "object") return;
    const object = body as { id?: unknown; nextPageToken?: unknown };
    const record = (id: unknown) => {
      if (typeof id === "string" && /^[a-z]+_/.test(id)) seen.set(id.slice(0, id.indexOf("_")), id);
    };
    record(object.id);
    // A list: its items under "data" (intents, as the contract has it) or under their own name ("events", …); the newest first.
    for (const value of Object.values(object)) if (Array.isArray(value) && value.length > 0) record((value[0] as { id?: unknown }).id);
    if (typeof object.nextPageToken === "string") nextPageToken = object.nextPageToken;
  };
  const api = async (method: string, route: string, body?: unknown) => {
    const res = await fetch(`${server.url}/v1${route}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  let paidCount = 0;
  /** The intent a refund example refunds: the one in hand when it is paid, else a new one, paid. */
  const paidIntent = async (): Promise<string> => {
    const current = seen.get("pi");
    if (current && (await api("GET", `/v2/payment-intents/${current}`)).body["status"] === "successful") return current;
    paidCount += 1;
    const created = await api("POST", "/v2/payment-intents", { amount: 50000, customerEmail: "ada@example.com", clientReference: `doc-commands-paid-${paidCount}` });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = String(created.body["id"]);
    const paid = await api("POST", `/v2/test-helpers/payment-intents/${id}/attempts`, { outcome: "succeeded" });
    assert.equal(paid.status, 201, JSON.stringify(paid.body));
    seen.set("pi", id);
    return id;
  };
  const fill = async (word: string, command: string[]): Promise<string> => {
    let filled = word.replaceAll(printedOrigin, server.url).replaceAll(printedReceiver, receiverOrigin);
    if (/\bpi_…\/refunds/.test(filled) && command.includes("POST")) filled = filled.replace("pi_…", await paidIntent());
    filled = filled.replace(/\b([a-z]+)_…/g, (elided, prefix: string) => seen.get(prefix) ?? elided);
    return filled.replace("pageToken=…", `pageToken=${encodeURIComponent(nextPageToken)}`);
  };

  /** Runs one command; returns what went wrong, or undefined. */
  return async (command: ShellCommand, where: string): Promise<string | undefined> => {
    const words: string[] = [];
    for (const word of command.words) words.push(await fill(word, command.words));
    const still = words.find((word) => /[a-z]_…/.test(word) || word.includes("…"));
    if (still) return `${where}: nothing seen before fills ${still}`;
    if (words[0] === "curl") {
      // The status goes to stderr, so stdout stays what the reader sees.
      const ran = await run("curl", [...words.slice(1), "--max-time", "15", "-w", "%{stderr}%{http_code}"]);
      const status = Number(ran.stderr.trim().split("\n").at(-1));
      const body = jsonBody(ran.stdout);
      remember(body);
      if (ran.code !== 0 || !(status >= 200 && status < 300)) return `${where}: curl exit ${ran.code}, HTTP ${status}: ${ran.stdout.slice(-400)}`;
      if (body === undefined) return `${where}: the answer is not JSON: ${ran.stdout.slice(0, 200)}`;
      return undefined;
    }
    if (words[0] === "npx" && words[1] === "buf" && words[2] === "curl") {
      const streaming = words.some((word) => word.endsWith("/StreamEvents"));
      // "until interrupted": a stream that is still open after a few seconds is the documented behaviour.
      const ran = await run("npx", words.slice(1), streaming ? 4_000 : 30_000);
      remember(jsonBody(ran.stdout));
      if (streaming ? ran.code !== -1 : ran.code !== 0) return `${where}: exit ${ran.code}: ${ran.stderr.slice(-400)}`;
      return undefined;
    }
    return `${where}: ${words[0]} is not a command this test runs`;
  };
}

/** The banner's "Try:" command, as npm start printed it. */
function bannerCommand(stdout: string): string {
  const lines = stdout.split("\n");
  const start = lines.findIndex((line) => line.trim().startsWith("curl "));
  assert.ok(start >= 0, `the banner has a curl line:\n${stdout}`);
  const command: string[] = [];
  for (const line of lines.slice(start)) {
    command.push(line.trim());
    if (!line.endsWith("\\")) break;
  }
  return command.join("\n");
}

describe("the documentation's commands, run as printed", () => {
  let server: ServerProcess;
  let key: string;
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver();
    server = await startServerProcess({});
    const banner = /demo merchant "demo" with API key (\S+)/.exec(server.stdout());
    assert.ok(banner, `npm start printed its demo key:\n${server.stdout()}`);
    key = banner[1]!;
  });
  after(async () => {
    await server.stop();
    await receiver.close();
  });

  it("npm start's banner command, then README.md's, docs/api.md's and docs/operations.md's curl and buf curl commands, in order, on the banner's key", async () => {
    const runOne = createSession(server, key, `http://127.0.0.1:${receiver.port}/webhooks`);
    const failures: string[] = [];
    const blocks: Block[] = [
      { page: "the banner", line: 0, text: bannerCommand(server.stdout()) },
      ...shellBlocks("README.md").filter((block) => block.text.includes("curl")),
      ...shellBlocks("docs/api.md").filter((block) => /\bcurl\b/.test(block.text)),
      ...shellBlocks("docs/operations.md").filter((block) => /\bcurl\b/.test(block.text)),
    ];
    assert.ok(blocks.length >= 6, `found ${blocks.length} blocks`);
    let count = 0;
    for (const block of blocks) {
      for (const command of shellCommands(block.text, { KEY: key })) {
        // grpcurl is a Go binary neither npm nor Debian's packages here provide; its buf curl twin beside it runs.
        if (command.words[0] === "grpcurl") continue;
        count += 1;
        const failure = await runOne(command, `${block.page}:${block.line + command.line}`);
        if (failure) failures.push(failure);
      }
    }
    assert.deepEqual(failures, []);
    assert.ok(count >= 25, `ran ${count} commands`);
  });
});

describe("docs/testing.md's curl and jq sandbox script, as one script", () => {
  let server: ServerProcess;
  before(async () => {
    // As that page starts it: `PORT=8080 TEST_CLOCK=true npx payment-intents serve`.
    server = await startServerProcess({ env: { TEST_CLOCK: "true", TEST_HELPERS: "true" } });
  });
  after(() => server.stop());

  it("prints what its comments say: successful; pending, pending, failed; processing, successful; expired; a time; expired", async () => {
    const [script] = shellBlocks("docs/testing.md").filter((block) => block.text.includes("test-helpers/merchants"));
    assert.ok(script, "docs/testing.md has the curl sandbox script");
    const ran = await run("bash", ["-euo", "pipefail", "-c", script.text.replaceAll(printedOrigin, server.url)], 60_000);
    assert.equal(ran.code, 0, ran.stderr);
    const lines = ran.stdout.trim().split("\n");
    const attempt = jsonBody(lines.slice(0, -9).join("\n")) as { outcome?: string } | undefined;
    assert.equal(attempt?.outcome, "succeeded", ran.stdout);
    assert.deepEqual(lines.slice(-9, -2), ["successful", "pending", "pending", "failed", "processing", "successful", "expired"]);
    assert.match(lines.at(-2)!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    assert.equal(lines.at(-1), "expired");
  });
});
