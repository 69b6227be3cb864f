/**
 * OrderedHeap is a binary min-heap under a comparison of the caller's: the
 * memory delivery queue keeps each endpoint's idle deliveries in one, so a
 * claim reads the oldest due without walking the backlog, and the expiry
 * sweep's DeadlineHeap (deadline-heap.ts) is one by time. Nothing is removed
 * from the middle: a reader skips entries that no longer apply when they
 * come out (lazy deletion).
 */
export interface OrderedHeap<T> {
  push(item: T): void;
  /** The least item, or undefined when empty. */
  peek(): T | undefined;
  pop(): T | undefined;
  readonly size: number;
}

/** createOrderedHeap: `before(a, b)` is true when a comes out before b. */
export function createOrderedHeap<T>(before: (a: T, b: T) => boolean): OrderedHeap<T> {
  const items: T[] = [];
  const swap = (i: number, j: number) => {
    const held = items[i]!;
    items[i] = items[j]!;
    items[j] = held;
  };
  return {
    push(item) {
      items.push(item);
      let i = items.length - 1;
      while (i > 0) {
        const parent = (i - 1) >>> 1;
        if (!before(items[i]!, items[parent]!)) break;
        swap(i, parent);
        i = parent;
      }
    },
    peek: () => items[0],
    pop() {
      const top = items[0];
      if (top === undefined) return undefined;
      const last = items.pop()!;
      if (items.length > 0) {
        items[0] = last;
        let i = 0;
        for (;;) {
          const left = 2 * i + 1;
          const right = left + 1;
          let least = i;
          if (left < items.length && before(items[left]!, items[least]!)) least = left;
          if (right < items.length && before(items[right]!, items[least]!)) least = right;
          if (least === i) break;
          swap(i, least);
          i = least;
        }
      }
      return top;
    },
    get size() {
      return items.length;
    },
  };
}
