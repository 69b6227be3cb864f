import { createHash } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import type {
  CreatePaymentIntentRequest,
  ListPaymentIntentsRequest,
} from "../../gen/payments/v2/payment_intent_pb.js";
import { isPaymentIntentStatus, type PaymentIntentRecord } from "../domain/payment-intent.js";
import type { SettlementAccountRecord } from "../domain/settlement-account.js";
import type { Clock } from "../lib/clock.js";
import type { IdGenerator } from "../lib/ids.js";
import type { PaymentIntentStore } from "../store/payment-intent-store.js";
import type { SettlementAccountStore } from "../store/settlement-account-store.js";
import { checkClientReference, invalid } from "./field-rules.js";
import { normalizeCreateRequest, type NormalizedCreate } from "./normalize-create-request.js";
import type { PageTokenCodec } from "./page-token.js";
import { ignorePaymentEvents, type PaymentEvents } from "./payment-events.js";
import { createPaymentExpiry } from "./payment-expiry.js";
import { assertTransition } from "./payment-state-machine.js";
import type { PaymentIntentListItemView, PaymentIntentPresenter, PaymentIntentView } from "./payment-intent-view.js";
import type { PaymentMethodCatalogue } from "./payment-method-catalogue.js";

export const defaultPageSize = 50;
export const maxPageSize = 100;

/** The result of create: the intent, and whether it was an idempotent replay. */
export interface CreateResult {
  intent: PaymentIntentView;
  replayed: boolean;
}

export interface ListResult {
  items: PaymentIntentListItemView[];
  /** Set only when another page exists. */
  nextPageToken?: string;
}

/** The §4.3 reply. */
export interface DeleteResult {
  status: 200;
  title: "OK";
  message: string;
}

/**
 * PaymentIntentService holds the rules of payment intents: validation,
 * idempotent creation, tenant scoping, paging and the delete transition. Every
 * method takes the caller's merchant id and never reads another merchant's rows.
 */
export interface PaymentIntentService {
  create(merchantId: string, request: CreatePaymentIntentRequest): Promise<CreateResult>;
  get(merchantId: string, id: string): Promise<PaymentIntentListItemView>;
  list(merchantId: string, request: ListPaymentIntentsRequest): Promise<ListResult>;
  delete(merchantId: string, id: string): Promise<DeleteResult>;
}

export interface PaymentIntentServiceDeps {
  intents: PaymentIntentStore;
  accounts: SettlementAccountStore;
  catalogue: PaymentMethodCatalogue;
  presenter: PaymentIntentPresenter;
  pageTokens: PageTokenCodec;
  clock: Clock;
  ids: IdGenerator;
  events?: PaymentEvents;
  /** How long a pending intent can be paid: CHECKOUT_TTL. */
  checkoutTtlMs: number;
}

/** createPaymentIntentService wires the rules to their store, clock and ids. */
export function createPaymentIntentService(deps: PaymentIntentServiceDeps): PaymentIntentService {
  const { intents, accounts, presenter, clock, ids } = deps;
  const events = deps.events ?? ignorePaymentEvents;
  const expiry = createPaymentExpiry({ intents, clock, events });

  const notFound = (id: string) => new ConnectError(`payment intent ${id} not found`, Code.NotFound);

  /** Split accounts must exist and be the caller's; foreign ids read as unknown. */
  async function checkSplitAccounts(merchantId: string, input: NormalizedCreate): Promise<void> {
    if (input.splits.length === 0) return;
    const found = new Set((await accounts.findByIds(merchantId, input.splits.map((s) => s.settlementAccountId))).map((a) => a.id));
    input.splits.forEach((split, index) => {
      if (!found.has(split.settlementAccountId)) {
        throw invalid(`settlementAccounts[${index}].settlementAccountId: no settlement account ${split.settlementAccountId}`);
      }
    });
  }

  /** The settlementAccount of each list item (§4.2), read in one batch per page. */
  async function withAccounts(merchantId: string, records: PaymentIntentRecord[]): Promise<PaymentIntentListItemView[]> {
    const splitIds = [...new Set(records.flatMap((r) => (r.splits[0] ? [r.splits[0].settlementAccountId] : [])))];
    const byId = new Map((await accounts.findByIds(merchantId, splitIds)).map((a) => [a.id, a]));
    let earliest: SettlementAccountRecord | null | undefined;
    const items: PaymentIntentListItemView[] = [];
    for (const record of records) {
      const first = record.splits[0];
      let account: SettlementAccountRecord | null;
      if (first) {
        account = byId.get(first.settlementAccountId) ?? null;
      } else {
        // Not ??=: null (the merchant has no account) is an answer, to be read once per page.
        if (earliest === undefined) earliest = (await accounts.findEarliest(merchantId)) ?? null;
        account = earliest;
      }
      items.push(presenter.toListItem(record, account));
    }
    return items;
  }

  return {
    async create(merchantId, request) {
      const input = normalizeCreateRequest(request, deps.catalogue);
      await checkSplitAccounts(merchantId, input);
      const fingerprint = fingerprintOf(input, request.paymentMethod);
      const now = clock.now();
      const record: PaymentIntentRecord = {
        id: ids.paymentIntentId(),
        merchantId,
        amount: input.amount,
        // No fee model yet: the merchant receives the whole amount.
        totalAmount: input.amount,
        currency: input.currency,
        country: "NG",
        customerEmail: input.customerEmail,
        receiptEmail: input.receiptEmail,
        status: "pending",
        clientReference: input.clientReference,
        paymentMethods: input.paymentMethods,
        callbackUrl: input.callbackUrl,
        transaction: null,
        splits: input.splits,
        checkoutToken: ids.checkoutToken(),
        requestFingerprint: fingerprint,
        createdAt: now,
        updatedAt: now,
        expiresAt: new Date(now.getTime() + deps.checkoutTtlMs),
        deletedAt: null,
      };
      const result = await intents.insert(record);
      if (result.inserted) {
        events.created(merchantId, record.id, record.amount);
        return { intent: presenter.toView(result.record), replayed: false };
      }

      const existing = result.existing;
      if (existing.deletedAt !== null) {
        throw new ConnectError(
          `clientReference ${input.clientReference} belongs to deleted payment intent ${existing.id}; use a new reference`,
          Code.AlreadyExists,
        );
      }
      if (existing.requestFingerprint !== fingerprint) {
        throw new ConnectError(
          `clientReference ${input.clientReference} is already used by payment intent ${existing.id} with a different request`,
          Code.AlreadyExists,
        );
      }
      return { intent: presenter.toView(existing), replayed: true };
    },

    async get(merchantId, id) {
      const found = await intents.findById(merchantId, id);
      if (!found || found.deletedAt !== null) throw notFound(id);
      const [item] = await withAccounts(merchantId, [await expiry.settle(found)]);
      return item!;
    },

    async list(merchantId, request) {
      const pageSize = request.pageSize ?? defaultPageSize;
      if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > maxPageSize) {
        throw invalid(`pageSize must be an integer from 1 to ${maxPageSize}`);
      }
      if (request.clientReference !== "") checkClientReference("clientReference", request.clientReference);
      if (request.status !== "" && !isPaymentIntentStatus(request.status)) {
        throw invalid("status must be one of pending, successful, failed, expired, cancelled");
      }
      const scope = { merchantId, clientReference: request.clientReference, status: request.status };
      let after;
      if (request.pageToken !== "") {
        after = deps.pageTokens.decode(request.pageToken, scope);
        if (!after) throw invalid("pageToken is not valid for this query");
      }
      // Lapsed intents become expired before the page is read, so a status
      // filter never shows an intent under a status it no longer has.
      await expiry.sweep();
      const rows = await intents.list({
        merchantId,
        limit: pageSize + 1,
        after,
        clientReference: request.clientReference || undefined,
        status: isPaymentIntentStatus(request.status) ? request.status : undefined,
      });
      const page = rows.slice(0, pageSize);
      const last = page[page.length - 1];
      return {
        items: await withAccounts(merchantId, page),
        nextPageToken: rows.length > pageSize && last ? deps.pageTokens.encode(last, scope) : undefined,
      };
    },

    async delete(merchantId, id) {
      const found = await intents.findById(merchantId, id);
      if (!found || found.deletedAt !== null) throw notFound(id);
      assertTransition(id, (await expiry.settle(found)).status, "cancelled");
      if (!(await intents.cancel(merchantId, id, clock.now()))) {
        // Lost a race with another transition: report what the intent is now.
        const now = await intents.findById(merchantId, id);
        if (!now || now.deletedAt !== null) throw notFound(id);
        assertTransition(id, now.status, "cancelled");
      }
      events.transitioned(merchantId, id, "pending", "cancelled");
      return { status: 200, title: "OK", message: `Payment intent ${id} deleted` };
    },
  };
}

/**
 * fingerprintOf hashes what the client asked for, after normalisation, so a
 * retry that differs only in spelling a default (currency "" vs "NGN") still
 * replays. Methods are hashed as given: an omitted list stays "omitted" even if
 * the operator enables another processor between the two requests.
 */
function fingerprintOf(input: NormalizedCreate, methodsGiven: readonly string[]): string {
  const canonical = JSON.stringify([
    input.amount.toString(),
    input.currency,
    input.customerEmail,
    input.receiptEmail,
    input.clientReference,
    methodsGiven,
    input.callbackUrl,
    input.splits.map((s) => [s.settlementAccountId, s.splitAmount.toString()]),
  ]);
  return createHash("sha256").update(canonical).digest("hex");
}
