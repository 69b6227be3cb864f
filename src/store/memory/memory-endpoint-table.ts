import type { EventType } from "../../domain/event.js";
import { compareCreation, insertInCreationOrder } from "./creation-order.js";

/**
 * MemoryEndpointEntry is what memory mode keeps of an endpoint beside the
 * delivery queue's MemoryEndpoint (URL, secrets, enabled or disabled, failing
 * state): who owns it and what it takes. The two share the endpoint's id.
 */
export interface MemoryEndpointEntry {
  id: string;
  merchantId: string;
  livemode: boolean;
  url: string;
  /** Empty: every type. */
  eventTypes: EventType[];
  description: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** MemoryEndpointTable is memory mode's registry of live (not deleted) endpoints, per merchant, oldest first. */
export interface MemoryEndpointTable {
  add(entry: MemoryEndpointEntry): void;
  /** The stored entry (callers copy what they hand out). */
  find(merchantId: string, id: string): MemoryEndpointEntry | undefined;
  /** The merchant's live endpoints, oldest first (createdAt, then id). */
  ofMerchant(merchantId: string): readonly MemoryEndpointEntry[];
  /** Removes an endpoint; false when the merchant has no such endpoint. */
  remove(merchantId: string, id: string): boolean;
}

/** createMemoryEndpointTable keeps endpoints by id and by merchant in creation order. */
export function createMemoryEndpointTable(): MemoryEndpointTable {
  const byId = new Map<string, MemoryEndpointEntry>();
  const byMerchant = new Map<string, MemoryEndpointEntry[]>();
  const keyOf = (entry: MemoryEndpointEntry) => entry;

  function find(merchantId: string, id: string): MemoryEndpointEntry | undefined {
    const entry = byId.get(id);
    return entry && entry.merchantId === merchantId ? entry : undefined;
  }

  return {
    add(entry) {
      if (byId.has(entry.id)) throw new Error(`webhook endpoint ${entry.id} already exists`);
      byId.set(entry.id, entry);
      let ofMerchant = byMerchant.get(entry.merchantId);
      if (!ofMerchant) byMerchant.set(entry.merchantId, (ofMerchant = []));
      insertInCreationOrder(ofMerchant, entry, keyOf);
    },
    find,
    ofMerchant: (merchantId) => byMerchant.get(merchantId) ?? [],
    remove(merchantId, id) {
      const entry = find(merchantId, id);
      if (!entry) return false;
      byId.delete(id);
      const ofMerchant = byMerchant.get(merchantId)!;
      ofMerchant.splice(
        ofMerchant.findIndex((other) => compareCreation(other, entry) === 0),
        1,
      );
      return true;
    },
  };
}

/** takesEventType: an endpoint without a filter takes every type. */
export function takesEventType(entry: Pick<MemoryEndpointEntry, "eventTypes">, type: EventType): boolean {
  return entry.eventTypes.length === 0 || entry.eventTypes.includes(type);
}
