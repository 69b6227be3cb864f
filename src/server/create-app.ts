import type { ApiKeyVerifier } from "../auth/api-key-verifier.js";
import type { Clock } from "../lib/clock.js";
import type { IdGenerator } from "../lib/ids.js";
import type { Logger } from "../lib/logger.js";
import { createPageTokenCodec } from "../service/page-token.js";
import type { PaymentEvents } from "../service/payment-events.js";
import { createPaymentIntentService } from "../service/payment-intent-service.js";
import { createPaymentIntentPresenter } from "../service/payment-intent-view.js";
import { createPaymentMethodCatalogue } from "../service/payment-method-catalogue.js";
import { createSettlementAccountService } from "../service/settlement-account-service.js";
import type { PaymentIntentStore } from "../store/payment-intent-store.js";
import type { SettlementAccountStore } from "../store/settlement-account-store.js";
import { createHandler } from "./create-handler.js";
import type { HttpRoute } from "./http-route.js";
import type { NodeHandler } from "./node-http.js";

export interface AppOptions {
  intents: PaymentIntentStore;
  accounts: SettlementAccountStore;
  verifier: ApiKeyVerifier;
  clock: Clock;
  ids: IdGenerator;
  logger: Logger;
  /** Where customers reach the service: the origin of every checkoutLink. */
  publicUrl: string;
  basePath: string;
  /** Third-party processor names offered beside card, bank_transfer and ussd. */
  processors: readonly string[];
  /** Signs page tokens; instances that share a database must share it. */
  pageTokenSecret: string;
  maxBodyBytes: number;
  /** Plain HTTP endpoints served beside the API (pages, health, metrics). */
  httpRoutes?: readonly HttpRoute[];
  /** Told of every created intent and status change (metrics). */
  events?: PaymentEvents;
}

/**
 * createApp assembles the service from its parts: services over the given
 * stores, and the transports over the services. It reads no environment and
 * opens no port, so tests build it with in-memory stores and a fixed clock.
 */
export function createApp(options: AppOptions): NodeHandler {
  const catalogue = createPaymentMethodCatalogue(options.processors);
  const paymentIntents = createPaymentIntentService({
    intents: options.intents,
    accounts: options.accounts,
    catalogue,
    presenter: createPaymentIntentPresenter({ publicUrl: options.publicUrl, catalogue }),
    pageTokens: createPageTokenCodec(options.pageTokenSecret),
    clock: options.clock,
    ids: options.ids,
    events: options.events,
  });
  const settlementAccounts = createSettlementAccountService({
    accounts: options.accounts,
    clock: options.clock,
    ids: options.ids,
  });
  return createHandler({
    paymentIntents,
    settlementAccounts,
    verifier: options.verifier,
    basePath: options.basePath,
    maxBodyBytes: options.maxBodyBytes,
    logger: options.logger,
    httpRoutes: options.httpRoutes,
  });
}
