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

export function createDeadlineHeap<T>(): DeadlineHeap<T> {
  const entries: { at: number; item: T }[] = [];
  const swap = (i: number, j: number) => {
    const held = entries[i]!;
    entries[i] = entries[j]!;
    entries[j] = held;
  };
  return {
    push(at, item) {
      entries.push({ at, item });
      let i = entries.length - 1;
      while (i > 0) {
        const parent = (i - 1) >>> 1;
        if (entries[parent]!.at <= entries[i]!.at) break;
        swap(i, parent);
        i = parent;
      }
    },
    peekTime: () => entries[0]?.at,
    pop() {
      const top = entries[0];
      if (!top) return undefined;
      const last = entries.pop()!;
      if (entries.length > 0) {
        entries[0] = last;
        let i = 0;
        for (;;) {
          const left = 2 * i + 1;
          const right = left + 1;
          let smallest = i;
          if (left < entries.length && entries[left]!.at < entries[smallest]!.at) smallest = left;
          if (right < entries.length && entries[right]!.at < entries[smallest]!.at) smallest = right;
          if (smallest === i) break;
          swap(i, smallest);
          i = smallest;
        }
      }
      return top;
    },
    get size() {
      return entries.length;
    },
  };
}
