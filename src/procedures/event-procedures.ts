import { EventService } from "../../gen/payments/v2/events_pb.js";
import { defineProcedures, type Procedure } from "../pipeline/procedure.js";
import type { EventService as EventRules } from "../service/event-service.js";
import type { EventStreams } from "../service/event-stream.js";

/**
 * createEventProcedures adapts the event service to its RPCs. StreamEvents
 * is server streaming: one request message, then events until the client
 * leaves, its deadline passes or the server closes (it has no REST route).
 * The RPC server hands a server stream exactly its one request message, read
 * to the client's half-close (none or two is Unimplemented there).
 */
export function createEventProcedures(rules: EventRules, streams: EventStreams): Procedure[] {
  return defineProcedures(
    EventService,
    {
      listEvents: (request, call) => rules.list(call.merchantId, request, call.livemode),
      getEvent: (request, call) => rules.get(call.merchantId, request.id, call.livemode),
      redeliverEvent: (request, call) => rules.redeliver(call.merchantId, request, call.livemode),
      async *streamEvents(inputs, call) {
        for await (const request of inputs) yield* streams.stream(call.merchantId, request, call.signal, call.livemode);
      },
    },
    { requiresKey: true },
  );
}
