import type { EventRecord } from "../domain/event.js";

/** EventListener is told of a merchant's events committed in this process. */
export type EventListener = (events: readonly EventRecord[]) => void;

/**
 * CommitListener is told of every batch of events committed in this process
 * and of at most how many webhook deliveries that commit wrote (undefined:
 * not counted), so the delivery engine is woken only when one may be due.
 */
export type CommitListener = (events: readonly EventRecord[], deliveries: number | undefined) => void;

/**
 * EventNotifier fans the events this process commits out to whoever waits
 * for a merchant's events (StreamEvents): a wake-up, not the delivery of
 * record. Listeners still read the EventStore, which alone sees events other
 * instances committed and knows the order without gaps.
 */
export interface EventNotifier {
  /** Calls listener with each batch of the merchant's committed events until the returned function is called. */
  subscribe(merchantId: string, listener: EventListener): () => void;
  /** Calls listener with every batch of committed events, of any merchant (the delivery engine's wake-up), until the returned function is called. */
  subscribeAll(listener: CommitListener): () => void;
  /** Tells each merchant's listeners of its events (the outbox's committed()). Never throws. */
  notify(events: readonly EventRecord[], deliveries?: number): void;
}

export interface EventNotifierOptions {
  /** A listener threw: reported here, and the other listeners are still told. */
  onListenerError?: (error: unknown) => void;
}

/** createEventNotifier keeps listeners per merchant, so a commit only reaches its own merchant's streams. */
export function createEventNotifier(options: EventNotifierOptions = {}): EventNotifier {
  const listeners = new Map<string, Set<EventListener>>();
  const everyMerchant = new Set<CommitListener>();
  const tell = (listener: CommitListener, batch: readonly EventRecord[], deliveries?: number) => {
    try {
      listener(batch, deliveries);
    } catch (error) {
      options.onListenerError?.(error);
    }
  };
  return {
    subscribeAll(listener) {
      const entry: CommitListener = (events, deliveries) => listener(events, deliveries);
      everyMerchant.add(entry);
      return () => void everyMerchant.delete(entry);
    },
    subscribe(merchantId, listener) {
      let ofMerchant = listeners.get(merchantId);
      if (!ofMerchant) listeners.set(merchantId, (ofMerchant = new Set()));
      // A wrapper per subscription, so one function subscribed twice is told twice and removed once per unsubscribe.
      const entry: EventListener = (events) => listener(events);
      ofMerchant.add(entry);
      return () => {
        ofMerchant.delete(entry);
        if (ofMerchant.size === 0 && listeners.get(merchantId) === ofMerchant) listeners.delete(merchantId);
      };
    },
    notify(events, deliveries) {
      if (events.length === 0) return;
      for (const listener of [...everyMerchant]) tell(listener, events, deliveries);
      const byMerchant = new Map<string, EventRecord[]>();
      for (const event of events) {
        const batch = byMerchant.get(event.merchantId);
        if (batch) batch.push(event);
        else byMerchant.set(event.merchantId, [event]);
      }
      for (const [merchantId, batch] of byMerchant) {
        for (const listener of [...(listeners.get(merchantId) ?? [])]) tell(listener, batch);
      }
    },
  };
}
