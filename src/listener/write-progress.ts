import type net from "node:net";

/** The counters of a libuv stream handle that net.Socket keeps private. */
interface StreamHandleCounters {
  bytesWritten?: number;
  writeQueueSize?: number;
}

/**
 * flushedBytes is how many bytes of socket's output the kernel has taken so
 * far: what was handed to the libuv handle less what still waits in its
 * write queue. Unlike the public counters it moves while one large write is
 * only partly out, so a slow client that keeps reading a big response shows
 * progress. Without those handle counters (another Node release), it falls
 * back to the public ones: bytes of writes that have completed whole.
 */
export function flushedBytes(socket: net.Socket): number {
  const handle = (socket as unknown as { _handle?: StreamHandleCounters | null })._handle;
  if (typeof handle?.bytesWritten === "number" && typeof handle.writeQueueSize === "number") {
    return handle.bytesWritten - handle.writeQueueSize;
  }
  return socket.bytesWritten - socket.writableLength;
}

/**
 * unsentBytes is how much of socket's output is still waiting: in the
 * socket's own buffer (HTTP/1.1 writes) or in the libuv write queue (what an
 * HTTP/2 session wrote without going through the socket's stream).
 */
export function unsentBytes(socket: net.Socket): number {
  const handle = (socket as unknown as { _handle?: StreamHandleCounters | null })._handle;
  return Math.max(socket.writableLength, handle?.writeQueueSize ?? 0);
}

/** WriteWatch decides when a connection that owes bytes has stopped draining. */
export interface WriteWatch {
  /**
   * check records one look at the connection: `owed` bytes not yet sent and
   * `progress`, a number that grows whenever some of them reached the
   * client. True once owed has stayed above zero for timeoutMs with no
   * growth of progress and no fall of owed.
   */
  check(now: number, owed: number, progress: number): boolean;
}

/**
 * createWriteWatch measures "not draining" as no write progress, never as
 * total time: a response of any size completes as long as the client keeps
 * reading, and a client that stops reading is found timeoutMs later.
 */
export function createWriteWatch(timeoutMs: number, now: number): WriteWatch {
  let progressAt = now;
  let lastOwed = 0;
  let lastProgress = -1;
  return {
    check(at, owed, progress) {
      if (owed === 0 || progress > lastProgress || owed < lastOwed) progressAt = at;
      lastOwed = owed;
      lastProgress = progress;
      return at - progressAt >= timeoutMs;
    },
  };
}
