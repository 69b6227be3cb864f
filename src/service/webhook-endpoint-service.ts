import { randomBytes } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import type {
  CreateWebhookEndpointRequest,
  DeleteWebhookEndpointResponse,
  ListWebhookDeliveriesRequest,
  ListWebhookDeliveriesResponse,
  ListWebhookEndpointsResponse,
  RotateWebhookEndpointSecretRequest,
  WebhookEndpointWithSecret,
} from "../../gen/payments/v2/webhook_endpoints_pb.js";
import type { EventType } from "../domain/event.js";
import type { Clock } from "../lib/clock.js";
import type { IdGenerator } from "../lib/ids.js";
import type { Logger } from "../lib/logger.js";
import type { WebhookEndpointStore } from "../store/webhook-endpoint-store.js";
import type { DeliveryStatus } from "../store/delivery-queue.js";
import { checkEndpointHost, checkEndpointUrl } from "../webhooks/endpoint-url.js";
import type { HostResolver } from "../webhooks/host-resolver.js";
import { invalid } from "../rules/invalid.js";
import type { PageTokenCodec } from "./page-token.js";
import { inOtherMode } from "./mode-scope.js";
import { deliveryMessage, endpointMessage, endpointWithSecretMessage } from "./webhook-presenter.js";

/** WebhookEndpointService registers a merchant's webhook endpoints and shows their deliveries (README, Webhooks). */
export interface WebhookEndpointService {
  create(merchantId: string, request: CreateWebhookEndpointRequest, livemode: boolean): Promise<WebhookEndpointWithSecret>;
  /** The endpoints of the caller's mode. */
  list(merchantId: string, livemode: boolean): Promise<ListWebhookEndpointsResponse>;
  delete(merchantId: string, id: string, livemode: boolean): Promise<DeleteWebhookEndpointResponse>;
  /** Replaces the secret; the old one signs for graceSeconds more (the field's rule: 0 to 24 h, default 24 h). */
  rotateSecret(merchantId: string, request: RotateWebhookEndpointSecretRequest, livemode: boolean): Promise<WebhookEndpointWithSecret>;
  /** One page of an endpoint's deliveries, newest first; nextPageToken is "" on the last page. */
  listDeliveries(merchantId: string, request: ListWebhookDeliveriesRequest, livemode: boolean): Promise<ListWebhookDeliveriesResponse>;
}

export interface WebhookEndpointServiceDeps {
  endpoints: WebhookEndpointStore;
  pageTokens: PageTokenCodec;
  clock: Clock;
  ids: Pick<IdGenerator, "webhookEndpointId">;
  /** WEBHOOK_ALLOW_PRIVATE_URLS: http and non-public addresses accepted (development and tests). */
  allowPrivateUrls: boolean;
  /** Resolves an endpoint's host at registration. */
  resolve: HostResolver;
  /** The operator's log: the address and reason a URL's host was refused for (the merchant reads one sentence). */
  logger?: Logger;
  /** Most endpoints one merchant may register; default maxWebhookEndpoints. */
  maxPerMerchant?: number;
  /** Secret bytes; crypto's by default (injected so tests can predict secrets). */
  randomBytes?: (size: number) => Uint8Array;
}

/**
 * The most endpoints a merchant may register (enabled or disabled): more than
 * a business sends its events to, and few enough that one event never fans
 * out into more deliveries than the engine can keep up with.
 */
export const maxWebhookEndpoints = 16;

/** newSecret is "whsec_" and the base64 of 32 random bytes, the Standard Webhooks form. */
function newSecret(random: (size: number) => Uint8Array): string {
  return `whsec_${Buffer.from(random(32)).toString("base64")}`;
}

/**
 * createWebhookEndpointService checks what the fields' rules (run in the
 * pipeline: the URL's syntax, known event types each once, the
 * description's length) cannot: the scheme and the addresses the URL's host
 * is or resolves to, the resolution last (it is the slow one). All before
 * it touches the store, so input it refuses changes nothing.
 */
export function createWebhookEndpointService(deps: WebhookEndpointServiceDeps): WebhookEndpointService {
  const { endpoints, clock } = deps;
  const maxPerMerchant = deps.maxPerMerchant ?? maxWebhookEndpoints;
  const random = deps.randomBytes ?? randomBytes;
  const notFound = (id: string) => new ConnectError(`webhook endpoint ${id} not found`, Code.NotFound);
  const urlOptions = { allowPrivate: deps.allowPrivateUrls, logger: deps.logger };

  /** An endpoint of the caller's mode, or the 404 (one of the other mode's says so). */
  async function checkOwnMode(merchantId: string, id: string, livemode: boolean): Promise<void> {
    const found = await endpoints.findById(merchantId, id);
    if (!found) throw notFound(id);
    if (found.livemode !== livemode) throw inOtherMode("webhook endpoint", id, livemode);
  }

  return {
    async create(merchantId, request, livemode) {
      const url = checkEndpointUrl("url", request.url, urlOptions);
      await checkEndpointHost("url", url, { ...urlOptions, resolve: deps.resolve });
      const types = [...request.eventTypes] as EventType[];
      const description = request.description || null;
      const secret = newSecret(random);
      const result = await endpoints.create(
        { id: deps.ids.webhookEndpointId(livemode), merchantId, livemode, url: url.href, eventTypes: types, description, secret, createdAt: clock.now() },
        maxPerMerchant,
      );
      if (!result.created) {
        throw new ConnectError(
          `a merchant may register at most ${maxPerMerchant} webhook endpoints; delete one to add another`,
          Code.FailedPrecondition,
        );
      }
      return endpointWithSecretMessage(result.endpoint, secret);
    },

    async list(merchantId, livemode) {
      // A merchant has at most maxPerMerchant endpoints: filtering them here costs nothing.
      const all = (await endpoints.list(merchantId)).filter((endpoint) => endpoint.livemode === livemode);
      return { $typeName: "payments.v2.ListWebhookEndpointsResponse", webhookEndpoints: all.map(endpointMessage) };
    },

    async delete(merchantId, id, livemode) {
      await checkOwnMode(merchantId, id, livemode);
      if (!(await endpoints.delete(merchantId, id, clock.now()))) throw notFound(id);
      return { $typeName: "payments.v2.DeleteWebhookEndpointResponse", status: 200, title: "OK", message: `Webhook endpoint ${id} deleted` };
    },

    async rotateSecret(merchantId, { id, graceSeconds }, livemode) {
      await checkOwnMode(merchantId, id, livemode);
      const secret = newSecret(random);
      // The field's rule ran in the pipeline: graceSeconds is 0 to 86400, its default filled in.
      const endpoint = await endpoints.rotateSecret(merchantId, id, secret, clock.now(), graceSeconds! * 1000);
      if (!endpoint) throw notFound(id);
      return endpointWithSecretMessage(endpoint, secret);
    },

    async listDeliveries(merchantId, request, livemode) {
      await checkOwnMode(merchantId, request.id, livemode);
      // The field rules ran in the pipeline: pageSize is in range (its default filled in), status is a delivery status or "".
      const pageSize = request.pageSize!;
      const status = request.status;
      const scope = { merchantId, query: ["webhook_deliveries", request.id, status] };
      let after;
      if (request.pageToken !== "") {
        after = deps.pageTokens.decode(request.pageToken, scope);
        if (!after) throw invalid("pageToken is not valid for this query");
      }
      const rows = await endpoints.listDeliveries({
        merchantId,
        endpointId: request.id,
        limit: pageSize + 1,
        after,
        status: status === "" ? undefined : (status as DeliveryStatus),
      });
      if (!rows) throw notFound(request.id);
      const page = rows.length > pageSize ? rows.slice(0, pageSize) : rows;
      const last = page[page.length - 1];
      return {
        $typeName: "payments.v2.ListWebhookDeliveriesResponse",
        deliveries: page.map(deliveryMessage),
        nextPageToken: rows.length > pageSize && last ? deps.pageTokens.encode(last, scope) : "",
      };
    },
  };
}
