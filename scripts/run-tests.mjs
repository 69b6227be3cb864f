// The two tiers of tests, decided here once (docs/testing.md).
//
// npm test, the everyday run: every unit, contract and protocol suite on the
// in-memory stores, and the PostgreSQL store contract suites (test/store/)
// when PostgreSQL answers; nothing that needs a browser, HAProxy, PgBouncer,
// a stopwatch or another program started (*.process.test.ts: the service as
// a process, npm pack, the linters, the documentation's commands).
//
// npm run test:all (CI): every suite on the in-memory stores, then the REST,
// RPC, server and checkout suites once more on PostgreSQL (TEST_STORE=postgres,
// a fresh database per server), then the bounded fault drills
// (npm run drills -- --quick). REQUIRE_POSTGRES=1 turns "no PostgreSQL" into
// a failure, as CI wants.
//
// npm test -- FILE… runs the files named, whatever their tier, on the
// in-memory stores and (for REST, RPC, server and checkout suites) again on
// PostgreSQL. Every run ends with one line: "N passed, N failed, N skipped".
import { spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";

const major = Number(process.versions.node.split(".")[0]);
if (major < 22) {
  console.error(`Node.js ${process.versions.node} is too old: run the tests with npm test (Node 24 from devDependencies).`);
  process.exit(1);
}

function testFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return testFiles(path);
    return name.endsWith(".test.ts") ? [path] : [];
  });
}

/**
 * Test files run this many at a time (TEST_CONCURRENCY, default 3): most of a
 * suite's time is spent waiting on sockets, child processes and timers, so
 * files overlap well on two cores; every file gets its own servers, ports and
 * databases, so they never share state.
 */
const concurrency = Number(process.env.TEST_CONCURRENCY ?? 3);

/** Runs node's test runner, echoing its output and counting its summary. */
function run(label, files, env) {
  console.log(`\n# ${label}: ${files.length} files`);
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "--test", "--test-reporter=spec", `--test-concurrency=${concurrency}`, ...files],
      { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] },
    );
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
      process.stdout.write(chunk);
    });
    child.on("close", (code) => {
      const count = (name) => Number(new RegExp(`^ℹ ${name} (\\d+)$`, "m").exec(output)?.[1] ?? 0);
      resolve({ code, pass: count("pass"), fail: count("fail"), skipped: count("skipped") + count("todo") });
    });
  });
}

/** The bounded fault drills (drills/run.ts --quick), counted as one test. */
function drills() {
  console.log("\n# fault drills, bounded (npm run drills -- --quick)");
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "drills/run.ts", "--quick"], { stdio: "inherit" });
    child.on("close", (code) => resolve({ code, pass: code === 0 ? 1 : 0, fail: code === 0 ? 0 : 1, skipped: 0 }));
  });
}

async function postgresReason() {
  const url = process.env.TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query("select 1");
    return undefined;
  } catch (error) {
    return error.message;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Files of the all tier only: whole folders (browsers, the deployment's
 * HAProxy and PgBouncer, the PostgreSQL suites beyond the store contracts),
 * every *.timing.test.ts (latency and throughput bounds, which a busy machine
 * can miss) and every *.process.test.ts (suites that run another program:
 * the service as its own process through npm start or the CLI, npm pack and
 * install, the OpenAPI linters and client generator, the documentation's
 * commands; each costs seconds of CPU to start, and what they check changes
 * with the packaging, not in the edit loop).
 */
const allTierOnly = [/^test\/(browser|deploy|postgres)\//, /\.timing\.test\.ts$/, /\.process\.test\.ts$/];

const args = process.argv.slice(2);
const tierAll = args.includes("--all");
const named = args.filter((arg) => arg !== "--all");
const everyFile = testFiles("test").sort();
const all = named.length > 0 ? named.sort() : tierAll ? everyFile : everyFile.filter((file) => !allTierOnly.some((pattern) => pattern.test(file)));
const started = performance.now();
const results = [await run(tierAll || named.length > 0 ? "all suites, in-memory stores" : "everyday suites (npm test), in-memory stores", all, { TEST_STORE: "memory" })];

const reason = await postgresReason();
if (reason) {
  const message = `PostgreSQL is not reachable (${reason}): the PostgreSQL suites were skipped`;
  if (process.env.REQUIRE_POSTGRES === "1") {
    console.error(`\n# ${message}, but REQUIRE_POSTGRES=1`);
    results.push({ code: 1, pass: 0, fail: 1, skipped: 0 });
  } else {
    console.log(`\n# ${message}. Set TEST_DATABASE_URL or start PostgreSQL on 127.0.0.1:5432 to run them.`);
  }
} else if (tierAll || named.length > 0) {
  const transportSuites = all.filter((file) => /^test\/(rest|rpc|server|checkout)\//.test(file));
  // node --test with no file runs every test it finds: skip instead.
  if (transportSuites.length > 0) {
    results.push(await run("REST, RPC, server and checkout suites, PostgreSQL stores", transportSuites, { TEST_STORE: "postgres" }));
  }
}

if (tierAll && named.length === 0) results.push(await drills());

// A run that exits non-zero without a failing test (a crash, a file that does
// not load) still counts as one failure.
const total = { pass: 0, fail: 0, skipped: 0 };
for (const r of results) {
  total.pass += r.pass;
  total.fail += r.fail || (r.code !== 0 ? 1 : 0);
  total.skipped += r.skipped;
}
const minutes = ((performance.now() - started) / 60_000).toFixed(1);
console.log(`\n${total.pass} passed, ${total.fail} failed, ${total.skipped} skipped (${minutes} min)`);
process.exit(total.fail > 0 ? 1 : 0);
