/**
 * compareNewestFirst orders rows by createdAt desc, then id desc: the order
 * PostgreSQL gives with ORDER BY created_at DESC, id DESC.
 */
export function compareNewestFirst(a: { createdAt: Date; id: string }, b: { createdAt: Date; id: string }): number {
  const byTime = b.createdAt.getTime() - a.createdAt.getTime();
  if (byTime !== 0) return byTime;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}
