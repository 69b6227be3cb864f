import type { NodeRequest } from "./node-http.js";

/** BodyTooLarge is thrown when a request body passes its limit. */
export class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`request body is larger than ${limit} bytes`);
  }
}

/**
 * ClientGone is thrown when the client closed the request before its body
 * was complete: there is nobody left to answer, so callers write nothing and
 * the request is logged as 499.
 */
export class ClientGone extends Error {
  constructor() {
    super("the client closed the request before its body was complete");
  }
}

const empty = Buffer.alloc(0);

/**
 * readBody collects a request body up to limit bytes. A declared
 * Content-Length over the limit fails before any byte is read, and a streamed
 * body fails as soon as it passes the limit, so a large upload costs no memory.
 * Event listeners rather than an async iterator: a body is one chunk in almost
 * every request, and this is the hot path of every create.
 */
export function readBody(req: NodeRequest, limit: number): Promise<Buffer> {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(new BodyTooLarge(limit));
  if (req.readableEnded) return Promise.resolve(empty);
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (error: Error | undefined) => {
      if (settled) return;
      settled = true;
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onClose);
      req.off("close", onClose);
      if (error) reject(error);
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        // Stop reading: the rest of the upload is never buffered.
        req.pause();
        finish(new BodyTooLarge(limit));
      } else chunks.push(chunk);
    };
    // An HTTP/2 client that resets its stream with NO_ERROR before sending
    // END_STREAM gets its partial body ended by Node, after "aborted": that
    // body is not the request.
    const onEnd = () => finish(req.aborted ? new ClientGone() : undefined);
    const onClose = () => finish(new ClientGone());
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onClose);
    req.on("close", onClose);
  });
}
