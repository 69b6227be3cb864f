import net from "node:net";

/** A statement text the client sent, and how: Parse (extended protocol) or Query (simple protocol). */
export interface CapturedStatement {
  kind: "parse" | "query";
  text: string;
  /** A Parse's statement name; "" for an unnamed statement (planned with its values at each Bind). */
  name?: string;
}

/**
 * StatementCapture is a TCP proxy in front of PostgreSQL that reads the
 * frontend protocol (PostgreSQL protocol §55.7) on every connection through
 * it and records the SQL text of each Parse and Query message: exactly what a
 * server with log_statement = 'all' would write to its log, without changing
 * the shared server's configuration. Bind messages (the values) are not
 * recorded: they are where values belong.
 */
export interface StatementCapture {
  readonly port: number;
  /** Every statement text sent so far, in order. */
  readonly statements: readonly CapturedStatement[];
  /** Bytes of Bind messages seen: proof that values did travel, as parameters. */
  readonly bindBytes: number;
  /** Bind messages seen: one per statement executed, prepared or not. */
  readonly binds: number;
  close(): Promise<void>;
}

const sslRequestCode = 80_877_103;
const cancelRequestCode = 80_877_102;
const gssRequestCode = 80_877_104;

/** createStatementCapture listens on a free port of 127.0.0.1 and forwards to target. */
export async function createStatementCapture(target: { host: string; port: number }): Promise<StatementCapture> {
  const statements: CapturedStatement[] = [];
  const sockets = new Set<net.Socket>();
  let bindBytes = 0;
  let binds = 0;

  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => socket.destroy());
    }
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    upstream.pipe(client);

    let pending = Buffer.alloc(0);
    let started = false;
    client.on("data", (chunk: Buffer) => {
      upstream.write(chunk);
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        if (!started) {
          // Start-up messages have no type byte: length, then a code.
          if (pending.length < 8) return;
          const length = pending.readInt32BE(0);
          if (pending.length < length) return;
          const code = pending.readInt32BE(4);
          pending = pending.subarray(length);
          // An SSL or GSS request is answered before the real start-up; a cancel request is all there is.
          if (code !== sslRequestCode && code !== gssRequestCode && code !== cancelRequestCode) started = true;
          continue;
        }
        if (pending.length < 5) return;
        const type = String.fromCharCode(pending[0]!);
        const length = pending.readInt32BE(1);
        if (pending.length < 1 + length) return;
        const body = pending.subarray(5, 1 + length);
        pending = pending.subarray(1 + length);
        if (type === "P") {
          // Parse: statement name (C string), query (C string), parameter types.
          const nameEnd = body.indexOf(0);
          const textEnd = body.indexOf(0, nameEnd + 1);
          statements.push({ kind: "parse", text: body.subarray(nameEnd + 1, textEnd).toString("utf8"), name: body.subarray(0, nameEnd).toString("utf8") });
        } else if (type === "Q") {
          statements.push({ kind: "query", text: body.subarray(0, body.indexOf(0)).toString("utf8") });
        } else if (type === "B") {
          bindBytes += body.length;
          binds++;
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    statements,
    get bindBytes() {
      return bindBytes;
    },
    get binds() {
      return binds;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
