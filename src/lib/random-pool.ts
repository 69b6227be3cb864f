import { randomFillSync } from "node:crypto";

/**
 * RandomPool hands out cryptographically secure random bytes from a buffer
 * filled in large blocks: one call into the CSPRNG per few hundred ids
 * instead of one per id (as crypto.randomUUID does internally). Bytes are
 * never handed out twice.
 */
export interface RandomPool {
  /** Copies the next count random bytes into target at offset. */
  fill(target: Buffer, offset: number, count: number): void;
  /** The next count random bytes, as a new buffer. */
  take(count: number): Buffer;
}

/** createRandomPool makes a pool of blockSize bytes (a request for more is served directly). */
export function createRandomPool(blockSize = 4096): RandomPool {
  const block = Buffer.allocUnsafe(blockSize);
  let used = blockSize;
  const fill = (target: Buffer, offset: number, count: number) => {
    if (count > blockSize) {
      randomFillSync(target, offset, count);
      return;
    }
    if (used + count > blockSize) {
      randomFillSync(block);
      used = 0;
    }
    block.copy(target, offset, used, used + count);
    // Zero what was handed out, so no copy of it stays in the pool's memory.
    block.fill(0, used, used + count);
    used += count;
  };
  return {
    fill,
    take(count) {
      const out = Buffer.allocUnsafe(count);
      fill(out, 0, count);
      return out;
    },
  };
}
