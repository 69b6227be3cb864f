import type { NodeRequest } from "../../server/node-http.js";

/** BodyTooLarge is thrown when a request body passes its limit. */
export class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`request body is larger than ${limit} bytes`);
  }
}

/**
 * readBody collects a request body up to limit bytes. A declared
 * Content-Length over the limit fails before any byte is read, and a streamed
 * body fails as soon as it passes the limit, so a large upload costs no memory.
 */
export async function readBody(req: NodeRequest, limit: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) throw new BodyTooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new BodyTooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}
