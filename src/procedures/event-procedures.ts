import { Code, ConnectError } from "@connectrpc/connect";
import { EventService, type StreamEventsRequest } from "../../gen/payments/v2/events_pb.js";
import { defineProcedures, type Procedure } from "../pipeline/procedure.js";
import type { EventService as EventRules } from "../service/event-service.js";
import type { EventStreams } from "../service/event-stream.js";

/**
 * createEventProcedures adapts the event service to its RPCs. StreamEvents
 * is server streaming: one request message, then events until the client
 * leaves, its deadline passes or the server closes (it has no REST route).
 */
export function createEventProcedures(rules: EventRules, streams: EventStreams): Procedure[] {
  return defineProcedures(
    EventService,
    {
      listEvents: (request, call) => rules.list(call.merchantId, request),
      getEvent: (request, call) => rules.get(call.merchantId, request.id),
      redeliverEvent: (request, call) => rules.redeliver(call.merchantId, request),
      async *streamEvents(inputs, call) {
        yield* streams.stream(call.merchantId, await onlyRequest(inputs), call.signal);
      },
    },
    { requiresKey: true },
  );
}

/**
 * onlyRequest reads a server stream's one request message. The request is
 * read to its end (the client half-closes after it) rather than left behind,
 * which would tear down the request stream under the response.
 */
async function onlyRequest(inputs: AsyncIterable<StreamEventsRequest>): Promise<StreamEventsRequest> {
  let request: StreamEventsRequest | undefined;
  for await (const input of inputs) {
    if (request) throw new ConnectError("a server stream takes exactly one request message", Code.InvalidArgument);
    request = input;
  }
  if (!request) throw new ConnectError("the request carries no message", Code.InvalidArgument);
  return request;
}
