import { ConfigError, readConfig, type DatabaseConfig } from "../config.js";

/**
 * readDatabaseConfigOrExit is how the command-line tools read their settings:
 * the same checks as the server, and DATABASE_URL is required.
 */
export function readDatabaseConfigOrExit(env: Record<string, string | undefined>): DatabaseConfig {
  try {
    const database = readConfig(env).database;
    if (database) return database;
    process.stderr.write("configuration error: DATABASE_URL is required (postgres://user:password@host:port/database)\n");
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`configuration error: ${error.message}\n`);
  }
  process.exit(2);
}
