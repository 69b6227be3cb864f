import net from "node:net";

/** The parts of a connected node-postgres client a cancel request needs. */
interface CancellableClient {
  host: string;
  port: number;
  /** From BackendKeyData at start-up; unset before the connection is established. */
  processID?: number | null;
  secretKey?: number | null;
}

/** CancelRequest's fixed code (PostgreSQL protocol §55.7: 1234 in the high 16 bits, 5678 in the low). */
const cancelRequestCode = 80_877_102;

/**
 * sendCancelRequest asks PostgreSQL to cancel whatever the client's backend
 * is running, over a connection of its own (PostgreSQL protocol §55.2.7),
 * as psql does on Ctrl-C. A PgBouncer forwards it to the server connection the
 * client is paired with. The server answers nothing: done is called when it
 * has closed the connection (the request was read), or on an error or after
 * timeoutMs (a server that is gone, where the statement's own
 * statement_timeout still bounds it).
 */
export function sendCancelRequest(client: CancellableClient, timeoutMs: number, done: () => void = () => {}): void {
  const { processID, secretKey } = client;
  if (typeof processID !== "number" || typeof secretKey !== "number") {
    done();
    return;
  }
  const message = Buffer.alloc(16);
  message.writeInt32BE(16, 0);
  message.writeInt32BE(cancelRequestCode, 4);
  message.writeInt32BE(processID, 8);
  message.writeInt32BE(secretKey, 12);
  const socket = client.host.startsWith("/")
    ? net.connect(`${client.host}/.s.PGSQL.${client.port}`)
    : net.connect(client.port, client.host);
  // Written, not ended: as libpq's PQcancel does, the client waits for the
  // server to close the connection, which it does once the cancel has been
  // dealt with. PgBouncer drops a cancel whose connection the client closed
  // first. That close, an error or the timeout calls done, once.
  socket.setTimeout(timeoutMs, () => socket.destroy());
  socket.on("error", () => socket.destroy());
  socket.once("close", done);
  socket.once("connect", () => socket.write(message));
}
