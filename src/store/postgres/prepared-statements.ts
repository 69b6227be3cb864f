/**
 * PreparedStatements names the stores' statement texts and remembers, per
 * connection, which of them PostgreSQL has prepared, so a pipeline sends
 * each text once per connection (Parse of a named statement) and afterwards
 * only Bind and Execute: the server skips parsing and analysing the
 * statement, and the client skips sending it. Only for connections that are
 * sessions of their own: through a pooler in transaction mode the next
 * transaction may run on a server connection that never saw the statement
 * (the settings check decides, see database-settings.ts).
 */
export interface PreparedStatements {
  /** The statement name for a text, the same on every connection. */
  nameOf(text: string): string;
  /** What a connection has prepared: name → "ready", or "unknown" after a pipeline that failed. */
  on(connection: object): Map<string, "ready" | "unknown">;
}

export function createPreparedStatements(): PreparedStatements {
  const names = new Map<string, string>();
  const byConnection = new WeakMap<object, Map<string, "ready" | "unknown">>();
  return {
    nameOf(text) {
      let name = names.get(text);
      if (name === undefined) names.set(text, (name = `pi_${names.size + 1}`));
      return name;
    },
    on(connection) {
      let prepared = byConnection.get(connection);
      if (!prepared) byConnection.set(connection, (prepared = new Map()));
      return prepared;
    },
  };
}
