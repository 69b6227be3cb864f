import { createOrderedHeap } from "./ordered-heap.js";

/**
 * DeadlineHeap is a binary min-heap of items by a time in ms: the expiry
 * sweep reads the earliest deadlines first without scanning every intent.
 * Items are never removed from the middle: a reader skips those that no
 * longer apply when they come out (lazy deletion).
 */
export interface DeadlineHeap<T> {
  push(at: number, item: T): void;
  /** The earliest time, or undefined when empty. */
  peekTime(): number | undefined;
  pop(): { at: number; item: T } | undefined;
  readonly size: number;
}

/** createDeadlineHeap: an OrderedHeap (ordered-heap.ts) of entries by their time. */
export function createDeadlineHeap<T>(): DeadlineHeap<T> {
  const heap = createOrderedHeap<{ at: number; item: T }>((a, b) => a.at < b.at);
  return {
    push: (at, item) => heap.push({ at, item }),
    peekTime: () => heap.peek()?.at,
    pop: () => heap.pop(),
    get size() {
      return heap.size;
    },
  };
}
