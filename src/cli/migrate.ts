import { createSystemClock } from "../lib/clock.js";
import { createIdGenerator } from "../lib/ids.js";
import { openPostgresStores } from "../store/postgres/open-postgres-stores.js";
import { readDatabaseConfigOrExit } from "./read-database-config.js";

/** npm run db:migrate — applies pending migrations to DATABASE_URL and exits. */
const database = readDatabaseConfigOrExit(process.env);
const clock = createSystemClock();
const stores = await openPostgresStores({ ...database, migrate: true, clock, ids: createIdGenerator(clock) });
await stores.close();
process.stdout.write(
  stores.applied.length === 0 ? "database is up to date\n" : `applied: ${stores.applied.join(", ")}\n`,
);
