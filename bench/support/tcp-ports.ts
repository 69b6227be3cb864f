import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/**
 * parseTcpTable maps socket inode → local port from the text of
 * /proc/<pid>/net/tcp or tcp6 (proc(5): "local_address" is hex IP:port,
 * the tenth column the inode).
 */
export function parseTcpTable(text: string): Map<number, number> {
  const ports = new Map<number, number>();
  for (const line of text.split("\n").slice(1)) {
    const columns = line.trim().split(/\s+/);
    if (columns.length < 10) continue;
    const port = Number.parseInt(columns[1]!.split(":")[1]!, 16);
    const inode = Number(columns[9]);
    if (inode > 0) ports.set(inode, port);
  }
  return ports;
}

/**
 * localPorts lists the local TCP ports of a process's open sockets: for a
 * process connected to PostgreSQL, these are the client_port values of its
 * backends in pg_stat_activity. Empty when the process is gone.
 */
export function localPorts(pid: number): number[] {
  const inodes: number[] = [];
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (match) inodes.push(Number(match[1]));
      } catch {
        // Closed while listed.
      }
    }
  } catch {
    return [];
  }
  const table = new Map<number, number>();
  for (const file of ["tcp", "tcp6"]) {
    try {
      for (const [inode, port] of parseTcpTable(readFileSync(`/proc/${pid}/net/${file}`, "utf8"))) table.set(inode, port);
    } catch {
      // No IPv6 table on this kernel.
    }
  }
  return inodes.flatMap((inode) => (table.has(inode) ? [table.get(inode)!] : []));
}
