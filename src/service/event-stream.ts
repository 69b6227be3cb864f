import { Code, ConnectError } from "@connectrpc/connect";
import type { Event, StreamEventsRequest } from "../../gen/payments/v2/events_pb.js";
import type { EventType } from "../domain/event.js";
import type { EventStore } from "../store/event-store.js";
import type { EventNotifier } from "./event-notifier.js";
import { inOtherMode } from "./mode-scope.js";
import { eventMessage } from "./event-service.js";

/** EventStreams serves StreamEvents. */
export interface EventStreams {
  /**
   * The merchant's events after the request's cursor, stored ones first, then
   * live ones, until signal aborts (the client went away or its deadline
   * passed) or the server closes. Refusals (unknown after_event_id, a bad
   * type, too many streams) are raised before the first event.
   */
  /** The merchant's events of the mode (issue 23, §1): the other mode's are passed over, the cursor moving past them. */
  stream(merchantId: string, request: StreamEventsRequest, signal: AbortSignal, livemode: boolean): AsyncGenerator<Event>;
}

export interface EventStreamsOptions {
  events: EventStore;
  /** Wakes a stream when its merchant's events commit in this process; absent, streams only poll. */
  notifier?: Pick<EventNotifier, "subscribe">;
  /**
   * How often a waiting stream reads anyway: events committed by other
   * instances (PostgreSQL) raise no notification here, and on PostgreSQL an
   * event becomes readable only once older transactions end.
   */
  pollIntervalMs?: number;
  /** Most open streams per merchant on this instance; default maxStreamsPerMerchant. */
  maxPerMerchant?: number;
  /** Events read per store call. */
  batchSize?: number;
  /** Aborted when the server shuts down: every stream ends, and clients resume with the last id they received. */
  closing?: AbortSignal;
}

export const defaultStreamPollIntervalMs = 500;
/** Enough for a merchant's few consumers and their reconnects; each stream polls the store. */
export const maxStreamsPerMerchant = 10;
const defaultBatchSize = 100;

/**
 * createEventStreams hands a stream from stored to live events without a gap
 * or a duplicate: it only ever moves one store cursor forward
 * (EventStore.readAfter), and a notification only wakes it to read again. It
 * subscribes before its first read, so an event committed between a read and
 * the wait is never missed.
 */
export function createEventStreams(options: EventStreamsOptions): EventStreams {
  const { events } = options;
  const pollIntervalMs = options.pollIntervalMs ?? defaultStreamPollIntervalMs;
  const maxPerMerchant = options.maxPerMerchant ?? maxStreamsPerMerchant;
  const batchSize = options.batchSize ?? defaultBatchSize;
  const open = new Map<string, number>();

  return {
    async *stream(merchantId, request, signal, livemode) {
      // Known types, each once: the field's rules ran in the pipeline.
      const types = request.types as EventType[];
      let cursor;
      if (request.afterEventId !== "") {
        cursor = await events.cursorAfter(merchantId, request.afterEventId);
        if (cursor === undefined) throw new ConnectError(`event ${request.afterEventId} not found`, Code.NotFound);
        const after = await events.findById(merchantId, request.afterEventId);
        if (after && after.livemode !== livemode) throw inOtherMode("event", request.afterEventId, livemode);
      } else {
        cursor = await events.headCursor(merchantId);
      }
      const count = open.get(merchantId) ?? 0;
      if (count >= maxPerMerchant) {
        throw new ConnectError(`at most ${maxPerMerchant} event streams may be open per merchant`, Code.ResourceExhausted);
      }
      open.set(merchantId, count + 1);
      const stop = AbortSignal.any(options.closing ? [signal, options.closing] : [signal]);
      let wake: (() => void) | undefined;
      let notified = false;
      const unsubscribe = options.notifier?.subscribe(merchantId, () => {
        notified = true;
        wake?.();
      });
      try {
        while (!stop.aborted) {
          notified = false;
          const read = await events.readAfter(merchantId, cursor, batchSize, types);
          const moved = read.cursor !== cursor;
          cursor = read.cursor;
          for (const record of read.events) {
            if (stop.aborted) return;
            if (record.livemode === livemode) yield eventMessage(record);
          }
          // Read again at once while the cursor moves; wait only once caught up.
          if (moved || notified) continue;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(done, pollIntervalMs);
            function done() {
              clearTimeout(timer);
              stop.removeEventListener("abort", done);
              wake = undefined;
              resolve();
            }
            wake = done;
            stop.addEventListener("abort", done, { once: true });
          });
        }
      } finally {
        unsubscribe?.();
        const left = (open.get(merchantId) ?? 1) - 1;
        if (left === 0) open.delete(merchantId);
        else open.set(merchantId, left);
      }
    },
  };
}
