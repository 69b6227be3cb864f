/**
 * StoreHealth is the port readiness reads to learn whether storage can serve
 * this instance's requests. It is separate from the data ports so that a
 * probe never reads or writes business data, and it answers from what the
 * store's own calls saw: a readiness probe sends no query while the store
 * works (see probe for the one exception).
 */
export interface StoreHealth {
  /** What the store knows now, at once. */
  state(): StoreState;
  /**
   * Asks storage once, feeding state(). Readiness calls it only while
   * storage is unreachable, so that an instance the balancer took out (and
   * therefore gets no traffic) notices storage coming back. Never rejects.
   */
  probe(): Promise<void>;
}

/** StoreState is the store's view of its storage, for readiness and for /readyz detail. */
export interface StoreState {
  /** "memory" or "postgres". */
  kind: string;
  /** False while every attempt to reach storage since `since` has failed. */
  reachable: boolean;
  /** When the current reachability began (undefined before any call). */
  since: Date | undefined;
  /** How long storage has been unreachable; 0 while reachable. */
  unreachableForMs: number;
  /** The last failure to reach storage, in words safe to show without a key. */
  lastFailure?: { reason: string; at: Date };
  /** When a statement was last answered. */
  lastAnsweredAt?: Date;
  /** The connection pool, where there is one. */
  pool?: { open: number; idle: number; waiting: number; max: number; saturatedCalls: number };
  /**
   * Schema changes this code needs that the database lacks: checked at start
   * and periodically when the service does not migrate by itself. Empty when
   * up to date; undefined while unknown (not yet read, or the service's role
   * may not read mikro_orm_migrations).
   */
  pendingMigrations: readonly string[] | undefined;
}
