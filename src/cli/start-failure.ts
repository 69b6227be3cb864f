import type { Config } from "../config.js";
import { MigrationFailed } from "../store/postgres/migration-failed.js";

/** An error as Node's net layer and node-postgres report it. */
interface StartError {
  code?: string;
  message?: string;
  errors?: unknown[];
}

/**
 * describeStartFailure turns what stops the service from starting (the port,
 * the database, a migration) into one line naming the cause and what to do,
 * as a bad setting already is; undefined for anything else, which stays an
 * error with its stack (a bug). It never prints DATABASE_URL, which may
 * carry a password: only its host, port, database and user.
 */
export function describeStartFailure(error: unknown, config: Config): string | undefined {
  if (error instanceof MigrationFailed) {
    return `a database migration failed: ${error.message}; fix the cause (the database role needs to create tables), or set MIGRATE_ON_START=false and migrate as a separate step (npm run db:migrate)`;
  }
  const { code, message = "" } = codeOf(error);
  const where = `${config.host}:${config.port}`;
  switch (code) {
    case "EADDRINUSE":
      return `port ${config.port} on ${config.host} is already in use, probably by another run of this service: stop it (lsof -i :${config.port} shows it), or set PORT to another port`;
    case "EADDRNOTAVAIL":
      return `HOST ${config.host} is not an address of this machine (${where}): set HOST to one of its addresses, 127.0.0.1 or 0.0.0.0`;
    case "EACCES":
      return `no permission to listen on ${where}: ports below 1024 need privileges; set PORT to 1024 or above`;
  }
  const database = config.database && databaseOf(config.database.url);
  if (!database) return undefined;
  switch (code) {
    case "ECONNREFUSED":
    case "ETIMEDOUT":
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `the database at ${database.address} could not be reached (${code}): is PostgreSQL running there? Check the host and port in DATABASE_URL`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `the database host ${database.host} does not resolve: check the host in DATABASE_URL`;
    case "3D000":
      return `database "${database.name}" does not exist on ${database.address}: create it (createdb ${database.name}), or fix the database in DATABASE_URL`;
    case "28000":
      return `the database refused role "${database.user}" (${message}): create the role (createuser ${database.user}), or fix the user in DATABASE_URL`;
    case "28P01":
      return `the database refused the password of role "${database.user}": fix the password in DATABASE_URL`;
  }
  return undefined;
}

/** codeOf finds the errno or SQLSTATE, also inside an AggregateError (a host with several addresses). */
function codeOf(error: unknown): StartError {
  const start = (error ?? {}) as StartError;
  if (start.code) return start;
  const inner = start.errors?.find((e) => (e as StartError)?.code) as StartError | undefined;
  return inner ?? start;
}

function databaseOf(url: string) {
  try {
    const parsed = new URL(url);
    const host = parsed.hostname;
    return {
      host,
      address: `${host}:${parsed.port || "5432"}`,
      name: decodeURIComponent(parsed.pathname.replace(/^\//, "")) || decodeURIComponent(parsed.username),
      user: decodeURIComponent(parsed.username) || "(none)",
    };
  } catch {
    return undefined;
  }
}
