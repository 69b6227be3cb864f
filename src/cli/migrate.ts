import { runMigrations } from "../store/postgres/migrate.js";
import { readDatabaseConfigOrExit } from "./read-database-config.js";

/** npm run db:migrate — applies pending migrations to DATABASE_URL and exits. */
const database = readDatabaseConfigOrExit(process.env);
const applied = await runMigrations({ url: database.url });
process.stdout.write(applied.length === 0 ? "database is up to date\n" : `applied: ${applied.join(", ")}\n`);
