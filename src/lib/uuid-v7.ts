import type { Clock } from "./clock.js";
import { createRandomPool, type RandomPool } from "./random-pool.js";

/**
 * createUuidV7 returns a generator of UUIDv7 strings (RFC 9562 §5.7) that are
 * strictly increasing within one process, even inside one millisecond or when
 * the clock steps back: the 12-bit rand_a field is a counter (RFC 9562 §6.2,
 * method 1), seeded randomly each new millisecond, and an exhausted counter
 * borrows the next millisecond. Their hex form sorts in creation order, which
 * is what makes "newest first" paging stable.
 */
export function createUuidV7(clock: Clock, random: RandomPool = createRandomPool()): () => string {
  let lastMs = -1;
  let counter = 0;
  const bytes = Buffer.allocUnsafe(16);
  return () => {
    let ms = clock.now().getTime();
    if (ms > lastMs) {
      lastMs = ms;
      // Seed below 2^11 so a burst has room to count up before borrowing.
      random.fill(bytes, 0, 2);
      counter = bytes.readUInt16BE(0) & 0x7ff;
    } else {
      ms = lastMs;
      counter++;
      if (counter > 0xfff) {
        lastMs = ms = lastMs + 1;
        counter = 0;
      }
    }
    random.fill(bytes, 8, 8);
    bytes.writeUIntBE(ms, 0, 6);
    bytes[6] = 0x70 | (counter >> 8);
    bytes[7] = counter & 0xff;
    bytes[8] = 0x80 | (bytes[8]! & 0x3f);
    const hex = bytes.toString("hex");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  };
}
