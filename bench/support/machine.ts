import os from "node:os";
import pg from "pg";

/** Machine is what a figure was measured on. */
export interface Machine {
  cores: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  postgres: string;
  wrk: string;
  os: string;
}

/** describeMachine collects the machine, Node and PostgreSQL versions for the report. */
export async function describeMachine(databaseUrl: string, wrk: string): Promise<Machine> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  let postgres = "unknown";
  try {
    const { rows } = await client.query<{ server_version: string }>("show server_version");
    postgres = rows[0]?.server_version ?? postgres;
  } finally {
    await client.end();
  }
  const cpus = os.cpus();
  return {
    cores: os.availableParallelism(),
    cpuModel: cpus[0]?.model.trim() ?? "unknown",
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    postgres: `PostgreSQL ${postgres}`,
    wrk,
    os: `${os.type()} ${os.release()}`,
  };
}
