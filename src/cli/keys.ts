import { parseArgs } from "node:util";
import { newApiKey } from "../auth/api-key-format.js";
import { isKeyActive } from "../domain/api-key.js";
import { createSystemClock } from "../lib/clock.js";
import { createIdGenerator } from "../lib/ids.js";
import { openPostgresStores } from "../store/postgres/open-postgres-stores.js";
import { readDatabaseConfigOrExit } from "./read-database-config.js";

const usage = `usage:
  npm run keys -- create --merchant <id> [--name <display name>] [--mode live|test]
                                                                   prints a new key once (default mode: live)
  npm run keys -- list                                             id, merchant, mode, prefix, created, state, name
  npm run keys -- revoke <key id>`;

const { positionals, values } = parseArgs({
  args: process.argv.slice(2),
  allowPositionals: true,
  options: { merchant: { type: "string" }, name: { type: "string" }, mode: { type: "string" } },
});
const [command, ...rest] = positionals;
if (!command || !["create", "list", "revoke"].includes(command)) {
  process.stderr.write(`${usage}\n`);
  process.exit(2);
}

const database = readDatabaseConfigOrExit(process.env);
const clock = createSystemClock();
const stores = await openPostgresStores({ ...database, migrate: database.migrateOnStart, clock, ids: createIdGenerator(clock) });
let exitCode = 0;
try {
  if (command === "create") {
    const merchant = values.merchant ?? "";
    const mode = values.mode ?? "live";
    if (mode !== "live" && mode !== "test") {
      process.stderr.write(`--mode must be live or test\n${usage}\n`);
      exitCode = 2;
    } else if (!/^[A-Za-z0-9_.-]{1,64}$/.test(merchant)) {
      process.stderr.write(`--merchant must be 1-64 of A-Z a-z 0-9 _ . -\n${usage}\n`);
      exitCode = 2;
    } else {
      await stores.apiKeys.ensureMerchant(merchant, values.name ?? merchant);
      const key = newApiKey(mode);
      const record = await stores.apiKeys.addKey(merchant, key);
      // The only time the key is ever shown: only its hash is stored.
      process.stdout.write(`merchant: ${merchant}\nmode:     ${mode}\nkey id:   ${record.id}\napi key:  ${key}\n`);
      process.stderr.write("Store the key now: it cannot be shown again.\n");
    }
  } else if (command === "list") {
    const now = clock.now();
    for (const key of await stores.apiKeys.listKeys()) {
      const state = key.revokedAt
        ? `revoked ${key.revokedAt.toISOString()}`
        : isKeyActive(key, now)
          ? key.expiresAt
            ? `active until ${key.expiresAt.toISOString()}`
            : "active"
          : `expired ${key.expiresAt!.toISOString()}`;
      // The name last, quoted: it is the merchant's free text (a tab or newline in it cannot break the columns).
      process.stdout.write(`${key.id}\t${key.merchantId}\t${key.mode}\t${key.keyPrefix}…\t${key.createdAt.toISOString()}\t${state}\t${JSON.stringify(key.name)}\n`);
    }
  } else {
    const id = rest[0] ?? "";
    if (await stores.apiKeys.revokeKey(id)) {
      process.stdout.write(`revoked ${id}\n`);
    } else {
      process.stderr.write(`no active key with id ${JSON.stringify(id)}\n`);
      exitCode = 1;
    }
  }
} finally {
  await stores.close();
}
process.exit(exitCode);
