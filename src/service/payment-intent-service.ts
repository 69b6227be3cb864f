import { hash } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import type {
  CreatePaymentIntentRequest,
  DeletePaymentIntentResponse,
  ListPaymentIntentsRequest,
  ListPaymentIntentsResponse,
  PaymentIntent,
  PaymentIntentListItem,
} from "../../gen/payments/v2/payment_intent_pb.js";
import { isPaymentIntentStatus, type PaymentIntentRecord } from "../domain/payment-intent.js";
import type { Clock } from "../lib/clock.js";
import type { IdGenerator } from "../lib/ids.js";
import type { PaymentIntentStore } from "../store/payment-intent-store.js";
import type { SettlementAccountStore } from "../store/settlement-account-store.js";
import { invalid } from "../rules/invalid.js";
import { metaEntriesOf } from "./meta-entries.js";
import { inOtherMode, modeName } from "./mode-scope.js";
import { normalizeCreateRequest, type NormalizedCreate } from "./normalize-create-request.js";
import type { PageTokenCodec } from "./page-token.js";
import { ignorePaymentEvents, type PaymentEvents } from "./payment-events.js";
import { createPaymentExpiry } from "./payment-expiry.js";
import { assertTransition } from "./payment-state-machine.js";
import type { PaymentIntentPresenter } from "./payment-intent-presenter.js";
import type { PaymentMethodCatalogue } from "./payment-method-catalogue.js";


/** The result of create: the intent, and whether it was an idempotent replay. */
export interface CreateResult {
  intent: PaymentIntent;
  replayed: boolean;
}

/**
 * PaymentIntentService holds the rules of payment intents: validation,
 * idempotent creation, tenant scoping, paging and the delete transition. Every
 * method takes the caller's merchant id and mode (the key's, issue 23 §1) and
 * never reads another merchant's rows nor shows another mode's.
 */
export interface PaymentIntentService {
  create(merchantId: string, request: CreatePaymentIntentRequest, livemode: boolean): Promise<CreateResult>;
  get(merchantId: string, id: string, livemode: boolean): Promise<PaymentIntentListItem>;
  /** A page newest first; nextPageToken is "" on the last page. */
  list(merchantId: string, request: ListPaymentIntentsRequest, livemode: boolean): Promise<ListPaymentIntentsResponse>;
  /** The §4.3 reply. */
  delete(merchantId: string, id: string, livemode: boolean): Promise<DeletePaymentIntentResponse>;
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
  /**
   * Whether a live processor collects a payment method here (issue 23, §1):
   * a live intent offers only such methods. Absent: none does.
   */
  collectsLive?: (method: string) => boolean;
  /** The setting that adds a live processor, named by the 400 when a live intent has none for it. */
  liveSetting?: string;
}

/** createPaymentIntentService wires the rules to their store, clock and ids. */
export function createPaymentIntentService(deps: PaymentIntentServiceDeps): PaymentIntentService {
  const { intents, accounts, presenter, clock, ids } = deps;
  const events = deps.events ?? ignorePaymentEvents;
  const expiry = createPaymentExpiry({ intents, clock, events });

  const notFound = (id: string) => new ConnectError(`payment intent ${id} not found`, Code.NotFound);

  /** The caller's intent in the caller's mode; one of the other mode is a 404 that says so, a cancelled one a plain 404. */
  function ownIntent<T extends PaymentIntentRecord>(found: T | undefined, id: string, livemode: boolean): T {
    if (!found || found.status === "cancelled") throw notFound(id);
    if (found.livemode !== livemode) throw inOtherMode("payment intent", id, livemode);
    return found;
  }

  /** Split accounts must exist and be the caller's; foreign ids read as unknown. */
  async function checkSplitAccounts(merchantId: string, input: NormalizedCreate, livemode: boolean): Promise<void> {
    if (input.splits.length === 0) return;
    const found = new Map((await accounts.findByIds(merchantId, input.splits.map((s) => s.settlementAccountId))).map((a) => [a.id, a]));
    input.splits.forEach((split, index) => {
      const account = found.get(split.settlementAccountId);
      if (!account) throw invalid(`settlementAccounts[${index}].settlementAccountId: no settlement account ${split.settlementAccountId}`);
      if (account.livemode !== livemode) {
        throw invalid(
          `settlementAccounts[${index}].settlementAccountId: settlement account ${split.settlementAccountId} is a ${modeName(account.livemode)} mode account; a ${modeName(livemode)} mode intent splits to ${modeName(livemode)} mode accounts`,
        );
      }
    });
  }

  /**
   * The methods a live intent offers: those given, when a live processor
   * collects each (else 400: no real money could move through the others),
   * or by default those of the default list a live processor collects.
   */
  function liveMethodsOf(methods: readonly string[], given: boolean): string[] {
    const collects = deps.collectsLive ?? (() => false);
    const live = methods.filter(collects);
    const refused = methods.filter((method) => !collects(method));
    const fix = deps.liveSetting ? `set ${deps.liveSetting}` : "no live payment processor is configured";
    const offered = deps.catalogue.names.filter(collects);
    if (given && refused.length > 0) {
      throw invalid(
        `a live payment intent needs a live payment processor: paymentMethod ${refused.join(", ")} ${refused.length === 1 ? "is" : "are"} collected only in test mode here; ${offered.length > 0 ? `live mode offers ${offered.join(", ")}` : fix}`,
      );
    }
    if (live.length === 0) {
      // Only splits narrow the default list: live methods exist, but none takes them.
      throw invalid(
        `a live payment intent needs a live payment processor: ${offered.length > 0 ? `none of live mode's methods (${offered.join(", ")}) takes settlement splits` : fix}`,
      );
    }
    return live;
  }

  return {
    async create(merchantId, request, livemode) {
      const normalized = normalizeCreateRequest(request, deps.catalogue);
      const input = livemode ? { ...normalized, paymentMethods: liveMethodsOf(normalized.paymentMethods, request.paymentMethod.length > 0) } : normalized;
      await checkSplitAccounts(merchantId, input, livemode);
      const fingerprint = fingerprintOf(input, request.paymentMethod);
      const now = clock.now();
      const record: PaymentIntentRecord = {
        id: ids.paymentIntentId(livemode),
        merchantId,
        livemode,
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
        nextActionUrl: null,
        splits: input.splits,
        meta: input.meta,
        checkoutToken: ids.checkoutToken(merchantId),
        requestFingerprint: fingerprint,
        createdAt: now,
        updatedAt: now,
        expiresAt: new Date(now.getTime() + deps.checkoutTtlMs),
        deletedAt: null,
        amountRefunded: 0n,
      };
      const result = await intents.insert(record);
      if (result.inserted) {
        events.created(merchantId, record.id, record.amount);
        return { intent: presenter.toMessage(result.record, now), replayed: false };
      }

      const existing = result.existing;
      if (existing.status === "cancelled") {
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
      return { intent: presenter.toMessage(existing, now), replayed: true };
    },

    async get(merchantId, id, livemode) {
      const found = await intents.findWithAccount(merchantId, id);
      ownIntent(found?.intent, id, livemode);
      return presenter.toListItem(found!.intent, found!.account, clock.now());
    },

    async list(merchantId, request, livemode) {
      // The field rules ran in the pipeline: pageSize is in range (its default filled in), the filters well-formed.
      const pageSize = request.pageSize!;
      const meta = metaEntriesOf(request.meta);
      // The mode is part of the query: a page token of one mode is refused by the other.
      // Meta filters join the token's scope only when given, so tokens issued before them keep working.
      const scope = {
        merchantId,
        query: ["payment_intents", modeName(livemode), request.clientReference, request.status, ...meta.flatMap((e) => [e.name, e.value])],
      };
      let after;
      if (request.pageToken !== "") {
        after = deps.pageTokens.decode(request.pageToken, scope);
        if (!after) throw invalid("pageToken is not valid for this query");
      }
      // Lapsed pending intents count as expired from `now` (the store's
      // filter and the presenter agree); expiring them is the sweep's job.
      const now = clock.now();
      const rows = await intents.list({
        merchantId,
        livemode,
        limit: pageSize + 1,
        after,
        clientReference: request.clientReference || undefined,
        status: isPaymentIntentStatus(request.status) ? request.status : undefined,
        now,
        ...(meta.length > 0 && { meta }),
      });
      const page = rows.length > pageSize ? rows.slice(0, pageSize) : rows;
      const last = page[page.length - 1]?.intent;
      return {
        $typeName: "payments.v2.ListPaymentIntentsResponse",
        paymentIntents: page.map((row) => presenter.toListItem(row.intent, row.account, now)),
        nextPageToken: rows.length > pageSize && last ? deps.pageTokens.encode(last, scope) : "",
      };
    },

    async delete(merchantId, id, livemode) {
      const found = ownIntent(await intents.findById(merchantId, id), id, livemode);
      assertTransition(id, (await expiry.settle(found)).status, "cancelled");
      if (!(await intents.cancel(merchantId, id, clock.now()))) {
        // Lost a race with another transition: report what the intent is now.
        const now = await intents.findById(merchantId, id);
        if (!now || now.status === "cancelled") throw notFound(id);
        assertTransition(id, now.status, "cancelled");
      }
      events.transitioned(merchantId, id, "pending", "cancelled");
      return { $typeName: "payments.v2.DeletePaymentIntentResponse", status: 200, title: "OK", message: `Payment intent ${id} deleted` };
    },
  };
}

/**
 * fingerprintOf hashes what the client asked for, after normalisation, so a
 * retry that differs only in spelling a default (currency "" vs "NGN") still
 * replays. Meta counts in order (a retry must repeat it as sent). Methods are hashed as given: an omitted list stays "omitted" even if
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
    // Only when given, so intents created before meta existed still replay.
    ...(input.meta.length > 0 ? [input.meta.map((e) => [e.name, e.value])] : []),
  ]);
  return hash("sha256", canonical, "hex");
}
