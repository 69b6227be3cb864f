import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { ProcessorWebhookRejected } from "./processor-webhook-rejected.js";
import type { AttemptOutcome, PaymentInstructions, PaymentProcessor, ProcessorNotice, RefundOutcome } from "./payment-processor.js";
import { openTestProcessorJournal, type JournalEntry, type TestProcessorJournal } from "./test-processor-journal.js";

/** The test cards, as docs/payments.md's test-card table lists them. */
export const testCards = {
  succeeds: "4084084084084081",
  declined: "4000000000000002",
  /** The customer must approve the payment on a 3-D Secure page (→ requires_action). */
  needs3ds: "4000000000003220",
  /** The processor takes the money but its answer never comes (→ unknown, processing): the reconciler settles it as succeeded. */
  timesOut: "4000000000000119",
  /** The payment succeeds; every refund of it fails. */
  refundsFail: "4000000000005126",
} as const;

/** Marks the reference of a payment whose refunds fail, so any instance refunding it knows. */
const refundsFailPrefix = "txn_test_rf_";

/** What the test processor holds for one attempt key. */
type HeldAttempt =
  | { state: "in_flight" }
  | { state: "settled"; outcome: AttemptOutcome }
  | { state: "awaiting_customer"; reference: string; url: string; returnUrl: string; amount: bigint }
  /** A bank transfer or USSD payment: the money arrives at settlesAt (ms since the epoch), and the processor's webhook says so. */
  | { state: "awaiting_transfer"; reference: string; amount: bigint; settlesAt: number };

/** The methods whose money arrives later, confirmed by the processor's webhook (docs/payments.md, Test mode). */
const asynchronousMethods: ReadonlySet<string> = new Set(["bank_transfer", "ussd"]);

/** The notice of an arrived transfer is tried this many times (0.5 s, 1 s, 2 s, 4 s apart); then the reconciler's status check settles it. */
const noticeTries = 5;

export interface TestModeProcessorOptions {
  /** TEST_PROCESSOR_LATENCY_MS: every call waits this long first (default 0), as a real processor's network does. */
  latencyMs?: number;
  /** The service's public URL: the 3-D Secure test page lives under its /checkout. */
  publicUrl?: string;
  /** Signs and verifies its webhook notices (HMAC-SHA256); default: random per process (testWebhookKey derives one from CHECKOUT_SECRET). */
  webhookKey?: Buffer;
  /**
   * TEST_PROCESSOR_WEBHOOK_DELAY_MS: how long after the customer confirms a
   * bank transfer or USSD payment its money arrives and the processor's
   * signed webhook is sent to {publicUrl}/processor-webhooks/test (default 2000).
   */
  webhookDelayMs?: number;
  /** Sends one signed notice to url; true when it was taken (2xx). Default: an HTTP POST (a test records them instead). */
  deliver?: (url: string, notice: SignedNotice, signal: AbortSignal) => Promise<boolean>;
  /** TEST_PROCESSOR_JOURNAL: a file that keeps what the processor did (charges, settlements, refunds) across a restart; unset, this process's memory. */
  journalPath?: string;
}

/** A signed test-processor webhook, ready to POST to /processor-webhooks/test. */
export interface SignedNotice {
  headers: Record<string, string>;
  body: string;
}

/** The header that carries a test notice's signature: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">`. */
export const testSignatureHeader = "x-test-signature";

/** TestModeProcessor is the test-mode processor, with what a test, a drill or the 3-D Secure test page needs to reach. */
export interface TestModeProcessor extends PaymentProcessor {
  /** How many begin calls each attempt key made (a retry counts). */
  beginCalls(): ReadonlyMap<string, number>;
  /** How many times each attempt key was charged: never more than once. */
  charges(): ReadonlyMap<string, number>;
  /** How many refund calls each refund idempotency key made (a retry counts, a second refund never happens). */
  refundCalls(): ReadonlyMap<string, number>;
  /** Kobo refunded per payment reference: never more than was charged. */
  refundedByPayment(): ReadonlyMap<string, bigint>;
  /** The 3-D Secure test page's answer for an attempt awaiting it; returns where to send the customer, or undefined for no such attempt. */
  decide(idempotencyKey: string, approve: boolean): string | undefined;
  /** Whether an attempt key awaits the customer on the 3-D Secure test page. */
  awaitingCustomer(idempotencyKey: string): boolean;
  /** Signs a notice as the test processor's webhook sends it (for tests and drills; parseWebhook verifies it). */
  signNotice(notice: Exclude<ProcessorNotice, { kind: "ignored" }>, at?: Date): SignedNotice;
  /** Stops sending webhooks (timers and notices in flight) and closes the journal: the service is stopping. */
  close(): void;
}

/**
 * testWebhookKey derives the test processor's webhook key from
 * CHECKOUT_SECRET, which every instance of a deployment shares: a notice one
 * instance's test processor sends to PUBLIC_URL verifies on whichever
 * instance the balancer hands it to. HMAC with a label of its own, so the
 * key says nothing about the checkout's forms.
 */
export function testWebhookKey(checkoutSecret: string): Buffer {
  return createHmac("sha256", checkoutSecret).update("payment-intents test processor webhook v1").digest();
}

/**
 * createTestModeProcessor simulates an asynchronous processor without moving
 * money (docs/payments.md, Test cards). Card 4084 0840 8408 4081 succeeds,
 * 4000 0000 0000 0002 is declined, 4000 0000 0000 3220 needs 3-D Secure (a
 * redirect to a local test page with approve and deny), 4000 0000 0000 0119
 * times out with the money taken (the reconciler's status check finds it
 * succeeded); any other valid number is declined with a hint. A bank
 * transfer or a USSD payment is pending when the customer confirms: its
 * money arrives webhookDelayMs later, and the processor then sends a signed
 * webhook notice to our own POST /processor-webhooks/test (a status check
 * from then on answers succeeded too, so a notice that never lands is
 * reconciled). A third-party processor succeeds once the customer confirms.
 * Instructions derive from the intent id, so a reload shows the same
 * virtual account and USSD code.
 *
 * Like a real processor it charges each idempotency key once: a repeated
 * begin answers the first outcome, and it counts charges per key so a test
 * or drill can prove nothing was charged twice. Refunds succeed at once,
 * except those of a payment made with 4000 0000 0000 5126; each refund key
 * refunds once, never beyond the payment. Its state is this process's
 * memory, or a journal file that survives a kill of the process (journalPath).
 */
export function createTestModeProcessor(options: TestModeProcessorOptions = {}): TestModeProcessor {
  const latencyMs = options.latencyMs ?? 0;
  const webhookKey = options.webhookKey ?? randomBytes(32);
  const mac = (signed: string) => createHmac("sha256", webhookKey).update(signed).digest();
  const base = (options.publicUrl ?? "http://127.0.0.1").replace(/\/+$/, "");
  const digitsOf = (id: string, salt: string, count: number) => {
    const hash = createHash("sha256").update(`${salt}:${id}`).digest();
    let digits = "";
    for (let i = 0; digits.length < count; i++) digits += String(hash[i % hash.length]! % 10);
    return digits;
  };
  const newReference = () => `txn_test_${randomBytes(12).toString("hex")}`;

  const webhookDelayMs = options.webhookDelayMs ?? 2000;
  const webhookUrl = `${base}/processor-webhooks/test`;
  const deliver = options.deliver ?? postNotice;

  const attempts = new Map<string, HeldAttempt>();
  const calls = new Map<string, number>();
  const charged = new Map<string, number>();
  const refunds = new Map<string, { outcome: RefundOutcome; calls: number }>();
  const refunded = new Map<string, bigint>();
  const journal: TestProcessorJournal | undefined = options.journalPath === undefined ? undefined : openTestProcessorJournal(options.journalPath);
  const timers = new Set<NodeJS.Timeout>();
  const stopping = new AbortController();

  /** Holds an attempt's new state; the journal keeps every state but the in-flight one (a crash there charged nothing). */
  function hold(key: string, held: HeldAttempt): void {
    attempts.set(key, held);
    if (held.state !== "in_flight") journal?.append({ kind: "attempt", key, held: toJson(held) });
  }

  /** Waits the configured latency; an abort (the caller's timeout) ends the wait as a network error would. */
  async function network(signal: AbortSignal): Promise<boolean> {
    if (latencyMs <= 0) return !signal.aborted;
    try {
      await sleep(latencyMs, undefined, { signal });
      return true;
    } catch {
      return false;
    }
  }

  function charge(key: string): void {
    charged.set(key, (charged.get(key) ?? 0) + 1);
    journal?.append({ kind: "charge", key });
  }

  /** The money of a pending transfer arrives: charged and settled once; undefined when it is not (or no longer) pending. */
  function arrive(key: string): AttemptOutcome | undefined {
    const held = attempts.get(key);
    if (held?.state !== "awaiting_transfer") return undefined;
    charge(key);
    const outcome: AttemptOutcome = { kind: "succeeded", reference: held.reference, amount: held.amount, currency: "NGN" };
    hold(key, { state: "settled", outcome });
    return outcome;
  }

  /** At settlesAt the transfer arrives and its notice goes to our own webhook, tried a few times; the reconciler covers the rest. */
  function schedule(key: string, settlesAt: number): void {
    if (stopping.signal.aborted) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      const outcome = arrive(key);
      if (outcome) void sendNotice({ kind: "attempt", noticeId: `evt_test_${randomBytes(12).toString("hex")}`, idempotencyKey: key, outcome });
    }, Math.max(0, settlesAt - Date.now()));
    timer.unref();
    timers.add(timer);
  }

  async function sendNotice(notice: Exclude<ProcessorNotice, { kind: "ignored" }>): Promise<void> {
    for (let tried = 0; tried < noticeTries && !stopping.signal.aborted; tried++) {
      try {
        if (await deliver(webhookUrl, sign(notice), AbortSignal.any([stopping.signal, AbortSignal.timeout(10_000)]))) return;
      } catch {
        // Not delivered: tried again, as a processor's webhook is.
      }
      await sleep(500 * 2 ** tried, undefined, { signal: stopping.signal, ref: false }).catch(() => undefined);
    }
  }

  function sign(notice: Exclude<ProcessorNotice, { kind: "ignored" }>, at = new Date()): SignedNotice {
    const outcome = { ...notice.outcome, ...("amount" in notice.outcome && { amount: String(notice.outcome.amount) }) };
    const body = JSON.stringify({ id: notice.noticeId, type: notice.kind, key: notice.idempotencyKey, outcome });
    const t = Math.floor(at.getTime() / 1000);
    return { headers: { "content-type": "application/json", [testSignatureHeader]: `t=${t},v1=${mac(`${t}.${body}`).toString("hex")}` }, body };
  }

  function setRefund(key: string, outcome: RefundOutcome): void {
    refunds.set(key, { outcome, calls: 1 });
    journal?.append({ kind: "refund", key, outcome: outcome as unknown as Record<string, unknown> });
  }

  function setRefunded(payment: string, amount: bigint): void {
    refunded.set(payment, amount);
    journal?.append({ kind: "refunded", payment, amount: String(amount) });
  }

  // What a journal kept from before a restart; transfers still on their way arrive on time (or at once, if it passed).
  for (const entry of journal?.entries ?? []) replay(entry);
  for (const [key, held] of attempts) if (held.state === "awaiting_transfer") schedule(key, held.settlesAt);

  function replay(entry: JournalEntry): void {
    switch (entry.kind) {
      case "attempt":
        attempts.set(entry.key, fromJson(entry.held));
        break;
      case "charge":
        charged.set(entry.key, (charged.get(entry.key) ?? 0) + 1);
        break;
      case "refund":
        refunds.set(entry.key, { outcome: entry.outcome as unknown as RefundOutcome, calls: 1 });
        break;
      case "refunded":
        refunded.set(entry.payment, BigInt(entry.amount));
        break;
    }
  }

  /** What the processor decides for a new attempt (the money, if any, is taken here). */
  function decideNew(key: string, method: string, number: string, amount: bigint, returnUrl: string): { held: HeldAttempt; answer: AttemptOutcome } {
    const reference = newReference();
    const succeeded = (ref = reference): AttemptOutcome => ({ kind: "succeeded", reference: ref, amount, currency: "NGN" });
    if (asynchronousMethods.has(method)) {
      // Nothing is taken yet: the customer's bank sends the money later.
      return { held: { state: "awaiting_transfer", reference, amount, settlesAt: Date.now() + webhookDelayMs }, answer: { kind: "pending", reference } };
    }
    if (method !== "card") {
      charge(key);
      return { held: { state: "settled", outcome: succeeded() }, answer: succeeded() };
    }
    switch (number) {
      case testCards.succeeds:
        charge(key);
        return { held: { state: "settled", outcome: succeeded() }, answer: succeeded() };
      case testCards.refundsFail: {
        charge(key);
        const outcome = succeeded(reference.replace("txn_test_", refundsFailPrefix));
        return { held: { state: "settled", outcome }, answer: outcome };
      }
      case testCards.timesOut:
        // The money is taken; the answer is lost on the way back.
        charge(key);
        return { held: { state: "settled", outcome: succeeded() }, answer: { kind: "unknown", reason: "the test processor timed out (test card)" } };
      case testCards.needs3ds: {
        const url = `${base}/checkout/test-3ds/${encodeURIComponent(key)}`;
        return { held: { state: "awaiting_customer", reference, url, returnUrl, amount }, answer: { kind: "redirect", reference, url } };
      }
      case testCards.declined: {
        const outcome: AttemptOutcome = { kind: "declined", reference, reason: "The card was declined by its issuer." };
        return { held: { state: "settled", outcome }, answer: outcome };
      }
      default: {
        const outcome: AttemptOutcome = { kind: "declined", reference, reason: "This is test mode: use a test card, such as 4084 0840 8408 4081." };
        return { held: { state: "settled", outcome }, answer: outcome };
      }
    }
  }

  /** What a status check (or a repeated begin) answers for a key already held. */
  function answerOf(held: HeldAttempt): AttemptOutcome {
    switch (held.state) {
      case "in_flight":
        return { kind: "unknown", reason: "the test processor is still working on this attempt" };
      case "awaiting_customer":
        return { kind: "redirect", reference: held.reference, url: held.url };
      case "awaiting_transfer":
        return { kind: "pending", reference: held.reference };
      case "settled":
        return held.outcome;
    }
  }

  return {
    name: "test",
    testMode: true,

    handles: () => true,

    instructions(intent, method): PaymentInstructions {
      switch (method) {
        case "card":
          return { kind: "card" };
        case "bank_transfer":
          return {
            kind: "bank_transfer",
            accountNumber: `99${digitsOf(intent.id, "nuban", 8)}`,
            bankName: "Test Bank (test mode)",
            accountName: "Payment Intents Test Collections",
          };
        case "ussd":
          return { kind: "ussd", code: `*000*${digitsOf(intent.id, "ussd", 6)}#` };
        default:
          return { kind: "processor", processorName: method };
      }
    },

    async begin(request, signal) {
      const key = request.idempotencyKey;
      calls.set(key, (calls.get(key) ?? 0) + 1);
      const held = attempts.get(key);
      if (held) return (await network(signal)) ? answerOf(held) : { kind: "unknown", reason: "no answer from the test processor in time" };
      attempts.set(key, { state: "in_flight" });
      if (!(await network(signal))) {
        // The request never reached the processor: nothing was charged, and a status check says so.
        attempts.delete(key);
        return { kind: "unknown", reason: "no answer from the test processor in time" };
      }
      const { held: next, answer } = decideNew(key, request.method, request.card?.number ?? "", request.amount, request.returnUrl);
      hold(key, next);
      if (next.state === "awaiting_transfer") schedule(key, next.settlesAt);
      return answer;
    },

    async status(ref, signal) {
      if (!(await network(signal))) return { kind: "unknown", reason: "no answer from the test processor in time" };
      const pending = attempts.get(ref.idempotencyKey);
      // A transfer whose time has come has arrived, whether or not its notice was sent.
      if (pending?.state === "awaiting_transfer" && Date.now() >= pending.settlesAt) arrive(ref.idempotencyKey);
      const held = attempts.get(ref.idempotencyKey);
      // Never received: no money moved, so the attempt is declined for good.
      return held ? answerOf(held) : { kind: "declined", reference: null, reason: "The processor never received this payment." };
    },

    parseWebhook(headers, rawBody) {
      const header = headers[testSignatureHeader];
      const match = typeof header === "string" ? /^t=(\d{1,12}),v1=([0-9a-f]{64})$/.exec(header) : null;
      if (!match) throw new ProcessorWebhookRejected("no test signature");
      const expected = mac(`${match[1]}.${rawBody.toString("utf8")}`);
      if (!timingSafeEqual(expected, Buffer.from(match[2]!, "hex"))) throw new ProcessorWebhookRejected("the test signature does not match");
      let parsed: { id?: unknown; type?: unknown; key?: unknown; outcome?: Record<string, unknown> };
      try {
        parsed = JSON.parse(rawBody.toString("utf8"));
      } catch {
        throw new ProcessorWebhookRejected("the body is not JSON");
      }
      if (typeof parsed.id !== "string" || typeof parsed.key !== "string" || typeof parsed.outcome !== "object" || parsed.outcome === null) {
        throw new ProcessorWebhookRejected("not a test processor notice");
      }
      const outcome = parsed.outcome;
      if (parsed.type === "attempt") {
        return { kind: "attempt", noticeId: parsed.id, idempotencyKey: parsed.key, outcome: { ...outcome, ...(typeof outcome.amount === "string" && { amount: BigInt(outcome.amount) }) } as AttemptOutcome };
      }
      if (parsed.type === "refund") return { kind: "refund", noticeId: parsed.id, idempotencyKey: parsed.key, outcome: outcome as RefundOutcome };
      return { kind: "ignored", reason: `type ${String(parsed.type)}` };
    },

    async refund(request, signal) {
      if (!(await network(signal))) return { kind: "unknown", reason: "no answer from the test processor in time" };
      const seen = refunds.get(request.idempotencyKey);
      if (seen) {
        seen.calls += 1;
        return seen.outcome;
      }
      const payment = request.attempt.reference ?? "";
      const before = refunded.get(payment) ?? 0n;
      let outcome: RefundOutcome;
      if (payment.startsWith(refundsFailPrefix)) {
        outcome = { kind: "failed", reference: null, reason: "The test card's issuer refused the refund." };
      } else if (before + request.amount > request.attempt.amount) {
        outcome = { kind: "failed", reference: null, reason: "The refund is more than what is left of the payment." };
      } else {
        setRefunded(payment, before + request.amount);
        outcome = { kind: "succeeded", reference: `rfn_test_${randomBytes(12).toString("hex")}` };
      }
      setRefund(request.idempotencyKey, outcome);
      return outcome;
    },

    async refundStatus(ref, signal) {
      if (!(await network(signal))) return { kind: "unknown", reason: "no answer from the test processor in time" };
      return refunds.get(ref.idempotencyKey)?.outcome ?? { kind: "unknown", reason: "the test processor has no such refund" };
    },

    decide(idempotencyKey, approve) {
      const held = attempts.get(idempotencyKey);
      if (held?.state !== "awaiting_customer") return undefined;
      if (approve) charge(idempotencyKey);
      const outcome: AttemptOutcome = approve
        ? { kind: "succeeded", reference: held.reference, amount: held.amount, currency: "NGN" }
        : { kind: "declined", reference: held.reference, reason: "The payment was not confirmed on the 3-D Secure page." };
      hold(idempotencyKey, { state: "settled", outcome });
      return held.returnUrl;
    },

    signNotice: sign,

    close() {
      stopping.abort();
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      journal?.close();
    },

    awaitingCustomer: (idempotencyKey) => attempts.get(idempotencyKey)?.state === "awaiting_customer",
    beginCalls: () => new Map(calls),
    charges: () => new Map(charged),
    refundCalls: () => new Map([...refunds].map(([key, { calls: n }]) => [key, n])),
    refundedByPayment: () => new Map(refunded),
  };
}

/** A held attempt as the journal writes it (amounts as decimal strings). */
function toJson(held: HeldAttempt): Record<string, unknown> {
  const amounts = (value: object): Record<string, unknown> =>
    Object.fromEntries(Object.entries(value).map(([k, v]) => [k, typeof v === "bigint" ? v.toString() : v && typeof v === "object" ? amounts(v) : v]));
  return amounts(held);
}

/** A held attempt as the journal wrote it. */
function fromJson(json: Record<string, unknown>): HeldAttempt {
  const held = { ...json } as Record<string, unknown>;
  if (typeof held.amount === "string") held.amount = BigInt(held.amount);
  const outcome = held.outcome as Record<string, unknown> | undefined;
  if (outcome && typeof outcome.amount === "string") held.outcome = { ...outcome, amount: BigInt(outcome.amount) };
  return held as unknown as HeldAttempt;
}

/** postNotice POSTs a signed notice as a processor's webhook does. */
async function postNotice(url: string, notice: SignedNotice, signal: AbortSignal): Promise<boolean> {
  const res = await fetch(url, { method: "POST", headers: notice.headers, body: notice.body, signal });
  await res.arrayBuffer();
  return res.ok;
}
