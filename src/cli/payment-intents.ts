#!/usr/bin/env node
import module from "node:module";

// Node's compile cache keeps V8's compiled code of these modules on disk (in
// the system's temporary directory), so every start after the first skips
// compiling them: about half of `payment-intents serve`'s time to its first
// answer. Where the directory cannot be written, the start is as before.
module.enableCompileCache?.();
const { serve } = await import("./serve.js");

const usage = `usage: payment-intents serve

Starts the Payment Intent service (gRPC, gRPC-Web, Connect and REST on one
port), configured by environment variables: PORT, HOST, DATABASE_URL,
TEST_HELPERS, TEST_CLOCK and the rest of the README's configuration table.
Without DATABASE_URL it runs on in-memory stores with the test helpers on: a
sandbox for test suites in any language.`;

/**
 * The package's command (package.json "bin"), for suites that are not
 * written for Node: `npx payment-intents serve`. It reads the environment
 * and starts exactly what `npm start` starts.
 */
const [command, ...rest] = process.argv.slice(2);
if (command === "serve" && rest.length === 0) {
  await serve(process.env);
} else if (command === "help" || command === "--help" || command === "-h") {
  process.stdout.write(`${usage}\n`);
} else {
  process.stderr.write(`${command === undefined ? "" : `unknown command: ${[command, ...rest].join(" ")}\n`}${usage}\n`);
  process.exitCode = 2;
}
