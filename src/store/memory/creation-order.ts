/** What creation order sorts by: createdAt, then id (the order of the keyset index in PostgreSQL, reversed). */
export interface CreationKey {
  createdAt: Date;
  id: string;
}

/** compareCreation orders oldest first: createdAt ascending, then id ascending (code-unit order, as ids are ASCII). */
export function compareCreation(a: CreationKey, b: CreationKey): number {
  const byTime = a.createdAt.getTime() - b.createdAt.getTime();
  if (byTime !== 0) return byTime;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * firstNotBefore finds, by binary search in items kept oldest first, the
 * index of the first item whose key is at or after key: items before it are
 * exactly those that come after key in a newest-first listing.
 */
export function firstNotBefore<T>(items: readonly T[], keyOf: (item: T) => CreationKey, key: CreationKey): number {
  let low = 0;
  let high = items.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compareCreation(keyOf(items[middle]!), key) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * insertInCreationOrder adds item where it belongs. Ids are UUIDv7 and clocks
 * mostly move forward, so the common case is an append; equal timestamps and
 * a clock that stepped back still land in order.
 */
export function insertInCreationOrder<T>(items: T[], item: T, keyOf: (item: T) => CreationKey): void {
  const last = items[items.length - 1];
  if (last === undefined || compareCreation(keyOf(last), keyOf(item)) <= 0) {
    items.push(item);
    return;
  }
  items.splice(firstNotBefore(items, keyOf, keyOf(item)), 0, item);
}
