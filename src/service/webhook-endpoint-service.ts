import { randomBytes } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import type {
  CreateWebhookEndpointRequest,
  DeleteWebhookEndpointResponse,
  ListWebhookDeliveriesRequest,
  ListWebhookDeliveriesResponse,
  ListWebhookEndpointsResponse,
  WebhookEndpointWithSecret,
} from "../../gen/payments/v2/webhook_endpoints_pb.js";
import { eventTypes, isEventType, type EventType } from "../domain/event.js";
import type { Clock } from "../lib/clock.js";
import type { IdGenerator } from "../lib/ids.js";
import type { WebhookEndpointStore } from "../store/webhook-endpoint-store.js";
import type { DeliveryStatus } from "../store/delivery-queue.js";
import { checkEndpointHost, checkEndpointUrl } from "../webhooks/endpoint-url.js";
import type { HostResolver } from "../webhooks/host-resolver.js";
import { invalid } from "../rules/invalid.js";
import { defaultPageSize, maxPageSize, type PageTokenCodec } from "./page-token.js";
import { deliveryMessage, endpointMessage, endpointWithSecretMessage } from "./webhook-presenter.js";

/** WebhookEndpointService registers a merchant's webhook endpoints and shows their deliveries (README, Webhooks). */
export interface WebhookEndpointService {
  create(merchantId: string, request: CreateWebhookEndpointRequest): Promise<WebhookEndpointWithSecret>;
  list(merchantId: string): Promise<ListWebhookEndpointsResponse>;
  delete(merchantId: string, id: string): Promise<DeleteWebhookEndpointResponse>;
  rotateSecret(merchantId: string, id: string): Promise<WebhookEndpointWithSecret>;
  /** One page of an endpoint's deliveries, newest first; nextPageToken is "" on the last page. */
  listDeliveries(merchantId: string, request: ListWebhookDeliveriesRequest): Promise<ListWebhookDeliveriesResponse>;
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

/** The longest description, in characters. */
export const maxDescriptionLength = 256;

const deliveryStatuses: readonly DeliveryStatus[] = ["pending", "succeeded", "failed"];

/** newSecret is "whsec_" and the base64 of 32 random bytes, the Standard Webhooks form. */
function newSecret(random: (size: number) => Uint8Array): string {
  return `whsec_${Buffer.from(random(32)).toString("base64")}`;
}

/**
 * checkEventTypes accepts known types, each once; the list is the filter an
 * endpoint keeps (empty: every type).
 */
export function checkEventTypes(field: string, values: readonly string[]): EventType[] {
  const seen = new Set<string>();
  values.forEach((value, i) => {
    if (!isEventType(value)) throw invalid(`${field}[${i}] must be one of ${eventTypes.join(", ")}`);
    if (seen.has(value)) throw invalid(`${field}[${i}] repeats ${value}`);
    seen.add(value);
  });
  return [...values] as EventType[];
}

/** A description: at most 256 characters without control characters; "" means none. */
function checkDescription(value: string | undefined): string | null {
  if (value === undefined || value === "") return null;
  // eslint-disable-next-line no-control-regex
  if ([...value].length > maxDescriptionLength || /[\u0000-\u001f\u007f]/.test(value)) {
    throw invalid(`description must be at most ${maxDescriptionLength} characters of text`);
  }
  return value;
}

/**
 * createWebhookEndpointService checks every field before it touches the store
 * (the host's resolution last: it is the slow one), so input it refuses
 * changes nothing.
 */
export function createWebhookEndpointService(deps: WebhookEndpointServiceDeps): WebhookEndpointService {
  const { endpoints, clock } = deps;
  const maxPerMerchant = deps.maxPerMerchant ?? maxWebhookEndpoints;
  const random = deps.randomBytes ?? randomBytes;
  const notFound = (id: string) => new ConnectError(`webhook endpoint ${id} not found`, Code.NotFound);
  const urlOptions = { allowPrivate: deps.allowPrivateUrls };

  return {
    async create(merchantId, request) {
      const url = checkEndpointUrl("url", request.url, urlOptions);
      const types = checkEventTypes("eventTypes", request.eventTypes);
      const description = checkDescription(request.description);
      await checkEndpointHost("url", url, { ...urlOptions, resolve: deps.resolve });
      const secret = newSecret(random);
      const result = await endpoints.create(
        { id: deps.ids.webhookEndpointId(), merchantId, url: url.href, eventTypes: types, description, secret, createdAt: clock.now() },
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

    async list(merchantId) {
      const all = await endpoints.list(merchantId);
      return { $typeName: "payments.v2.ListWebhookEndpointsResponse", webhookEndpoints: all.map(endpointMessage) };
    },

    async delete(merchantId, id) {
      if (!(await endpoints.delete(merchantId, id, clock.now()))) throw notFound(id);
      return { $typeName: "payments.v2.DeleteWebhookEndpointResponse", status: 200, title: "OK", message: `Webhook endpoint ${id} deleted` };
    },

    async rotateSecret(merchantId, id) {
      const secret = newSecret(random);
      const endpoint = await endpoints.rotateSecret(merchantId, id, secret, clock.now());
      if (!endpoint) throw notFound(id);
      return endpointWithSecretMessage(endpoint, secret);
    },

    async listDeliveries(merchantId, request) {
      const pageSize = request.pageSize ?? defaultPageSize;
      if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > maxPageSize) {
        throw invalid(`pageSize must be an integer from 1 to ${maxPageSize}`);
      }
      const status = request.status;
      if (status !== "" && !(deliveryStatuses as readonly string[]).includes(status)) {
        throw invalid(`status must be one of ${deliveryStatuses.join(", ")}`);
      }
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
