import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { signPaystackBody } from "../../src/processor/paystack/paystack-signature.js";

/**
 * A local stand-in for Paystack's API, written in this project from
 * Paystack's documented request and response shapes (its OpenAPI
 * description, PaystackOSS/openapi, and its webhook documentation): the
 * routes the adapter uses, a hosted authorization page that sends the
 * customer back to callback_url with ?reference=…&trxref=…, and a webhook
 * sender that signs like Paystack. test/processor/paystack-contract.test.ts
 * holds its answers to Paystack's description, so it cannot drift into our
 * own reading of it. Amounts are in kobo; JSON numbers as Paystack sends them.
 */

/** The API routes the stand-in serves; a knob can take any of them down. */
export type PaystackRoute = "initialize" | "verify" | "refund" | "refund-fetch" | "refund-list";
export const paystackRoutes: readonly PaystackRoute[] = ["initialize", "verify", "refund", "refund-fetch", "refund-list"];

/** What a test can turn, between calls. */
export interface PaystackKnobs {
  /** Routes that answer 503, as Paystack does in an outage. */
  down: PaystackRoute[];
  /** Every API answer waits this long first (a timeout test sets it above the adapter's timeout). */
  slowMs: number;
  /** Set: every API call answers 429 with this Retry-After. */
  tooManyRetryAfter: string | null;
  /** Kobo the customer's payment differs from the transaction's (an amount mismatch); 0: none. */
  mismatchKobo: number;
  /** What a refund becomes after it is created (pending: it stays so). */
  refundsBecome: "processed" | "failed" | "pending";
  /** Where charge.success and refund.* events go; null: nowhere. */
  webhookUrl: string | null;
  /** charge.success before the customer is sent back (awaited) or after (sent once the redirect is answered). */
  webhookTiming: "before-return" | "after-return";
}

/** One API call as it went over the wire, for the contract test. */
export interface PaystackExchange {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: unknown;
  status: number;
  response: unknown;
}

/** A transaction as the stand-in keeps it. */
export interface StandInTransaction {
  id: number;
  reference: string;
  accessCode: string;
  email: string;
  amount: number;
  /** What the customer paid (the amount, unless mismatchKobo was set when they paid). */
  paidAmount: number;
  currency: string;
  callbackUrl: string | null;
  metadata: unknown;
  status: "abandoned" | "success" | "failed";
  createdAt: string;
  paidAt: string | null;
  refunded: number;
}

/** A refund as the stand-in keeps it. */
export interface StandInRefund {
  id: number;
  transaction: StandInTransaction;
  amount: number;
  status: "pending" | "processed" | "failed";
  merchantNote: string;
  createdAt: string;
}

export interface PaystackStandIn {
  readonly url: string;
  readonly knobs: PaystackKnobs;
  /** Every API call, in order (the authorization page is not Paystack's API). */
  readonly exchanges: PaystackExchange[];
  /** Webhook deliveries: the event and the receiver's status. */
  readonly webhooksSent: { event: string; status: number }[];
  transaction(reference: string): StandInTransaction | undefined;
  refundsOf(reference: string): StandInRefund[];
  /** The customer pays on the hosted page (without a browser); charge.success follows as knobs say. */
  pay(reference: string): Promise<StandInTransaction>;
  /** The webhook body Paystack sends for a paid transaction. */
  chargeSuccessEvent(reference: string): { event: "charge.success"; data: Record<string, unknown> };
  /** POSTs an event signed with key (the stand-in's own by default) to url; answers the receiver's status. */
  sendWebhook(url: string, event: unknown, key?: string): Promise<number>;
  close(): Promise<void>;
}

export interface PaystackStandInOptions {
  secretKey: string;
}

/** startPaystackStandIn listens on 127.0.0.1, a free port. */
export async function startPaystackStandIn(options: PaystackStandInOptions): Promise<PaystackStandIn> {
  const knobs: PaystackKnobs = {
    down: [],
    slowMs: 0,
    tooManyRetryAfter: null,
    mismatchKobo: 0,
    refundsBecome: "processed",
    webhookUrl: null,
    webhookTiming: "before-return",
  };
  const exchanges: PaystackExchange[] = [];
  const webhooksSent: { event: string; status: number }[] = [];
  const transactions = new Map<string, StandInTransaction>();
  const byAccessCode = new Map<string, StandInTransaction>();
  const refunds: StandInRefund[] = [];
  let nextId = 4_099_260_000;
  const integration = 463_433;
  const domain = options.secretKey.startsWith("sk_live_") ? "live" : "test";
  let url = "";

  const now = () => new Date().toISOString();

  const customer = (t: StandInTransaction) => ({
    id: 180_001,
    first_name: null,
    last_name: null,
    email: t.email,
    customer_code: "CUS_standin0000001",
    phone: null,
    metadata: null,
    risk_action: "default",
    international_format_phone: null,
  });

  /** VerifyResponse.data (and charge.success's data): every field the description requires. */
  const transactionResource = (t: StandInTransaction) => ({
    id: t.id,
    domain,
    status: t.status,
    reference: t.reference,
    receipt_number: null,
    amount: t.status === "success" ? t.paidAmount : t.amount,
    message: null,
    gateway_response: t.status === "success" ? "Successful" : t.status === "failed" ? "Declined" : "The transaction was not completed",
    paid_at: t.paidAt,
    created_at: t.createdAt,
    channel: "card",
    currency: t.currency,
    ip_address: "127.0.0.1",
    metadata: t.metadata ?? "",
    log: null,
    fees: t.status === "success" ? Math.min(Math.round(t.paidAmount * 0.015), 200_000) : null,
    fees_split: null,
    authorization: {
      authorization_code: "AUTH_standin01",
      bin: "408408",
      last4: "4081",
      exp_month: "12",
      exp_year: "2030",
      channel: "card",
      card_type: "visa ",
      bank: "TEST BANK",
      country_code: "NG",
      brand: "visa",
      reusable: true,
      signature: "SIG_standin0001",
      account_name: null,
      receiver_bank_account_number: null,
      receiver_bank: null,
    },
    customer: customer(t),
    plan: null,
    split: {},
    order_id: null,
    paidAt: t.paidAt,
    createdAt: t.createdAt,
    requested_amount: t.amount,
    pos_transaction_data: null,
    source: null,
    fees_breakdown: null,
    connect: null,
    transaction_date: t.createdAt,
    plan_object: {},
    subaccount: {},
  });

  /** RefundFetchResponse.data and RefundListResponseArray: one refund. */
  const refundResource = (r: StandInRefund) => ({
    integration,
    transaction: r.transaction.id,
    dispute: null,
    settlement: null,
    id: r.id,
    domain,
    currency: r.transaction.currency,
    amount: r.amount,
    status: r.status,
    refunded_at: r.status === "processed" ? r.createdAt : null,
    refunded_by: "merchant@example.com",
    customer_note: `Refund for transaction ${r.transaction.reference}`,
    merchant_note: r.merchantNote,
    deducted_amount: r.amount,
    fully_deducted: 1,
    createdAt: r.createdAt,
    bank_reference: null,
    transaction_reference: r.transaction.reference,
    reason: r.status === "failed" ? "Refund failed at the issuer" : "",
    customer: { ...customer(r.transaction), first_name: "", last_name: "", phone: "", metadata: "", international_format_phone: "" },
    refund_type: r.amount === r.transaction.paidAmount ? "full" : "partial",
    transaction_amount: r.transaction.paidAmount,
    initiated_by: "api",
    refund_channel: "card",
    session_id: null,
    collect_account_number: false,
  });

  /** RefundCreateResponse.data. */
  const createdRefund = (r: StandInRefund) => ({
    transaction: {
      id: r.transaction.id,
      domain,
      reference: r.transaction.reference,
      amount: r.transaction.paidAmount,
      paid_at: r.transaction.paidAt ?? r.transaction.createdAt,
      channel: "card",
      currency: r.transaction.currency,
      authorization: { exp_month: null, exp_year: null, account_name: null },
      customer: { international_format_phone: null },
      plan: {},
      subaccount: { currency: null },
      split: {},
      order_id: null,
      paidAt: r.transaction.paidAt ?? r.transaction.createdAt,
      pos_transaction_data: null,
      source: null,
      fees_breakdown: null,
    },
    integration,
    deducted_amount: 0,
    channel: null,
    merchant_note: r.merchantNote,
    customer_note: `Refund for transaction ${r.transaction.reference}`,
    status: r.status,
    refunded_by: "merchant@example.com",
    expected_at: new Date(Date.now() + 10 * 86_400_000).toISOString(),
    currency: r.transaction.currency,
    domain,
    amount: r.amount,
    fully_deducted: false,
    id: r.id,
    createdAt: r.createdAt,
    updatedAt: r.createdAt,
  });

  const sendWebhook = async (target: string, event: unknown, key = options.secretKey): Promise<number> => {
    const raw = JSON.stringify(event);
    const response = await fetch(target, {
      method: "POST",
      headers: { "content-type": "application/json", "x-paystack-signature": signPaystackBody(key, raw) },
      body: raw,
    });
    await response.arrayBuffer();
    webhooksSent.push({ event: (event as { event?: string }).event ?? "", status: response.status });
    return response.status;
  };

  const chargeSuccessEvent = (reference: string) => {
    const t = transactions.get(reference);
    if (!t || t.status !== "success") throw new Error(`the stand-in has no paid transaction ${reference}`);
    return { event: "charge.success" as const, data: transactionResource(t) };
  };

  const notify = async (event: unknown) => {
    if (knobs.webhookUrl) await sendWebhook(knobs.webhookUrl, event).catch(() => undefined);
  };

  const pay = async (reference: string, timing = knobs.webhookTiming): Promise<StandInTransaction> => {
    const t = transactions.get(reference);
    if (!t) throw new Error(`the stand-in has no transaction ${reference}`);
    if (t.status !== "success") {
      t.status = "success";
      t.paidAmount = t.amount + knobs.mismatchKobo;
      t.paidAt = now();
      if (timing === "before-return") await notify(chargeSuccessEvent(reference));
      else setTimeout(() => void notify(chargeSuccessEvent(reference)), 50).unref();
    }
    return t;
  };

  const settleRefundLater = (r: StandInRefund) => {
    if (knobs.refundsBecome === "pending") return;
    const outcome = knobs.refundsBecome;
    setTimeout(() => {
      r.status = outcome;
      if (outcome === "failed") r.transaction.refunded -= r.amount;
      void notify({ event: `refund.${outcome}`, data: refundResource(r) });
    }, 20).unref();
  };

  /** The API: one handler per route, each answering (status, body). */
  const api = async (req: IncomingMessage, path: string, query: URLSearchParams, body: unknown): Promise<[number, unknown, Record<string, string>?]> => {
    const route: PaystackRoute | undefined =
      req.method === "POST" && path === "/transaction/initialize" ? "initialize"
      : req.method === "GET" && path.startsWith("/transaction/verify/") ? "verify"
      : req.method === "POST" && path === "/refund" ? "refund"
      : req.method === "GET" && path === "/refund" ? "refund-list"
      : req.method === "GET" && /^\/refund\/[^/]+$/.test(path) ? "refund-fetch"
      : undefined;
    if (!route) return [404, { status: false, message: "Not found" }];
    if (knobs.slowMs > 0) await new Promise((resolve) => setTimeout(resolve, knobs.slowMs));
    if (req.headers.authorization !== `Bearer ${options.secretKey}`) return [401, { status: false, message: "Invalid key" }];
    if (knobs.tooManyRetryAfter !== null) return [429, { status: false, message: "Too many requests" }, { "retry-after": knobs.tooManyRetryAfter }];
    if (knobs.down.includes(route)) return [503, { status: false, message: "Service unavailable" }];
    const input = (body ?? {}) as Record<string, unknown>;

    switch (route) {
      case "initialize": {
        if (typeof input.email !== "string" || !Number.isInteger(input.amount)) {
          return [400, { status: false, message: "Invalid params", meta: { nextStep: "Send an email and an integer amount" }, type: "validation_error", code: "invalid_params" }];
        }
        const reference = typeof input.reference === "string" ? input.reference : randomBytes(5).toString("hex");
        if (transactions.has(reference)) return [400, { status: false, message: "Duplicate Transaction Reference", type: "validation_error", code: "duplicate_reference" }];
        const accessCode = randomBytes(8).toString("hex");
        const t: StandInTransaction = {
          id: nextId++,
          reference,
          accessCode,
          email: input.email,
          amount: input.amount as number,
          paidAmount: input.amount as number,
          currency: typeof input.currency === "string" ? input.currency : "NGN",
          callbackUrl: typeof input.callback_url === "string" ? input.callback_url : null,
          metadata: input.metadata,
          status: "abandoned",
          createdAt: now(),
          paidAt: null,
          refunded: 0,
        };
        transactions.set(reference, t);
        byAccessCode.set(accessCode, t);
        return [200, { status: true, message: "Authorization URL created", data: { authorization_url: `${url}/checkout/${accessCode}`, access_code: accessCode, reference } }];
      }
      case "verify": {
        const t = transactions.get(decodeURIComponent(path.slice("/transaction/verify/".length)));
        if (!t) return [404, { status: false, message: "Transaction reference not found" }];
        return [200, { status: true, message: "Verification successful", data: transactionResource(t) }];
      }
      case "refund": {
        const key = String(input.transaction ?? "");
        const t = transactions.get(key) ?? [...transactions.values()].find((x) => String(x.id) === key);
        if (!t) return [400, { status: false, message: "Transaction not found" }];
        if (t.status !== "success") return [400, { status: false, message: "Cannot refund a transaction that was not successful" }];
        const amount = input.amount === undefined ? t.paidAmount - t.refunded : (input.amount as number);
        if (!Number.isInteger(amount) || amount <= 0 || amount > t.paidAmount - t.refunded) {
          return [400, { status: false, message: "Refund amount cannot be more than the transaction's unrefunded amount" }];
        }
        t.refunded += amount;
        const r: StandInRefund = { id: nextId++, transaction: t, amount, status: "pending", merchantNote: String(input.merchant_note ?? ""), createdAt: now() };
        refunds.push(r);
        settleRefundLater(r);
        return [200, { status: true, message: "Refund has been queued for processing", data: createdRefund(r) }];
      }
      case "refund-fetch": {
        const r = refunds.find((x) => String(x.id) === path.slice("/refund/".length));
        if (!r) return [404, { status: false, message: "Refund not found" }];
        return [200, { status: true, message: "Refund retrieved", data: refundResource(r) }];
      }
      case "refund-list": {
        const perPage = Number(query.get("perPage") ?? 50);
        const page = Number(query.get("page") ?? 1);
        const from = query.get("from");
        const matching = refunds.filter((r) => !from || r.createdAt >= new Date(from).toISOString()).reverse();
        const data = matching.slice((page - 1) * perPage, page * perPage).map(refundResource);
        const meta = {
          total: matching.length,
          skipped: (page - 1) * perPage,
          perPage: String(perPage),
          page,
          pageCount: Math.max(1, Math.ceil(matching.length / perPage)),
          failedRefundCount: matching.filter((r) => r.status === "failed").length,
        };
        return [200, { status: true, message: "Refunds retrieved", data, meta }];
      }
    }
  };

  /** The hosted authorization page: not Paystack's API, the customer's side of it. */
  const page = async (req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> => {
    const match = /^\/checkout\/([0-9a-f]+)(\/pay|\/cancel)?$/.exec(path);
    const t = match && byAccessCode.get(match[1]!);
    if (!match || !t) return false;
    if (req.method === "GET" && !match[2]) {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(
        `<!doctype html><title>Paystack (stand-in)</title><h1>Paystack checkout (stand-in)</h1>` +
          `<p>${t.email} pays NGN ${(t.amount / 100).toFixed(2)}</p>` +
          `<form method="post" action="/checkout/${t.accessCode}/pay"><button type="submit">Pay NGN ${(t.amount / 100).toFixed(2)}</button></form>` +
          `<form method="post" action="/checkout/${t.accessCode}/cancel"><button type="submit">Cancel payment</button></form>`,
      );
      return true;
    }
    if (req.method === "POST" && match[2]) {
      // Paying settles the transaction; cancelling leaves it abandoned. Either way the customer goes back.
      if (match[2] === "/pay") await pay(t.reference);
      const back = new URL(t.callbackUrl ?? `${url}/`);
      back.searchParams.set("trxref", t.reference);
      back.searchParams.set("reference", t.reference);
      res.writeHead(302, { location: back.href });
      res.end();
      return true;
    }
    return false;
  };

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const target = new URL(req.url ?? "/", "http://stand-in");
    try {
      if (await page(req, res, target.pathname)) return;
      const raw = Buffer.concat(chunks).toString("utf8");
      let body: unknown;
      if (raw !== "") {
        try {
          body = JSON.parse(raw);
        } catch {
          body = raw;
        }
      }
      const [status, response, headers] = await api(req, target.pathname, target.searchParams, body);
      exchanges.push({
        method: req.method ?? "",
        path: target.pathname,
        query: Object.fromEntries(target.searchParams),
        headers: Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name, String(value)])),
        body,
        status,
        response,
      });
      res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
      res.end(JSON.stringify(response));
    } catch (error) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ status: false, message: String(error) }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    knobs,
    exchanges,
    webhooksSent,
    transaction: (reference) => transactions.get(reference),
    refundsOf: (reference) => refunds.filter((r) => r.transaction.reference === reference),
    pay: (reference) => pay(reference),
    chargeSuccessEvent,
    sendWebhook,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
