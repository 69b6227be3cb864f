import type { PaymentAttemptRecord } from "../../domain/payment-attempt.js";
import type { PaymentIntentRecord, PaymentIntentStatus } from "../../domain/payment-intent.js";
import type { FieldError } from "../../service/card-form.js";
import type { CheckoutMethod, CheckoutView } from "../../service/checkout-service.js";
import { formatNaira } from "./format-naira.js";
import { html, page, SafeHtml } from "./html.js";

const methodLabels: Record<string, string> = { card: "Card", bank_transfer: "Bank transfer", ussd: "USSD", paystack: "Paystack" };
const labelOf = (name: string) => methodLabels[name] ?? `Pay with ${name}`;

/** What each settled state tells the customer; none of them offers a payment. */
const stateMessages: Record<Exclude<PaymentIntentStatus, "pending">, { title: string; text: string }> = {
  processing: { title: "Payment processing", text: "We are waiting for your bank to confirm this payment. This page shows the result once it does." },
  requires_action: { title: "Confirm your payment", text: "Your bank needs you to confirm this payment." },
  successful: { title: "Payment received", text: "This payment has been made. Thank you." },
  failed: { title: "Payment failed", text: "This payment failed after too many declined attempts. Ask the merchant for a new payment link." },
  expired: { title: "Payment link expired", text: "This payment link has expired. Ask the merchant for a new one." },
  cancelled: { title: "Payment cancelled", text: "The merchant cancelled this payment." },
};

function header(view: CheckoutView): SafeHtml {
  return html`<header class="card">
<p class="merchant">${view.merchantName}</p>
<h1 class="amount">${formatNaira(view.intent.amount)}</h1>
<p class="muted">for ${view.intent.customerEmail}</p>
${view.testMode ? html`<p><span class="badge">Test mode: no real money moves</span></p>` : ""}
</header>`;
}

function errorsFor(errors: FieldError[], field: FieldError["field"]): SafeHtml {
  return html`${errors.filter((e) => e.field === field).map((e) => html`<p class="error" id="error-${field}">${e.message}</p>`)}`;
}

function methodSection(view: CheckoutView, entry: CheckoutMethod, action: string, csrf: string, errors: FieldError[]): SafeHtml {
  const name = entry.method.type;
  const amount = formatNaira(view.intent.amount);
  const hidden = html`<input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="method" value="${name}">`;
  const i = entry.instructions;
  let body: SafeHtml;
  switch (i.kind) {
    case "card":
      body = html`<form method="post" action="${action}" autocomplete="on" novalidate>
${hidden}
<label for="card-number">Card number</label>
<input id="card-number" name="card_number" inputmode="numeric" autocomplete="cc-number" placeholder="${entry.testMode ? "4084 0840 8408 4081" : "1234 5678 9012 3456"}" required>
${errorsFor(errors, "number")}
<div class="row">
<div><label for="card-expiry">Expiry date</label>
<input id="card-expiry" name="card_expiry" autocomplete="cc-exp" placeholder="MM/YY" required>
${errorsFor(errors, "expiry")}</div>
<div><label for="card-cvv">CVV</label>
<input id="card-cvv" name="card_cvv" inputmode="numeric" autocomplete="cc-csc" placeholder="123" required>
${errorsFor(errors, "cvv")}</div>
</div>
<button type="submit">Pay ${amount}</button>
</form>`;
      break;
    case "bank_transfer":
      body = html`<p>Transfer exactly <strong>${amount}</strong> to this account:</p>
<dl><dt>Account number</dt><dd id="virtual-account">${i.accountNumber}</dd><dt>Bank</dt><dd>${i.bankName}</dd><dt>Account name</dt><dd>${i.accountName}</dd></dl>
<form method="post" action="${action}">${hidden}<button type="submit">I have sent the money</button></form>`;
      break;
    case "ussd":
      body = html`<p>Dial <strong id="ussd-code">${i.code}</strong> on the phone linked to your bank account and approve ${amount}.</p>
<form method="post" action="${action}">${hidden}<button type="submit">I have dialled the code</button></form>`;
      break;
    case "processor":
      body = html`<p>Pay ${amount} through ${i.processorName}.</p>
<form method="post" action="${action}">${hidden}<button type="submit">Pay with ${i.processorName}</button></form>`;
      break;
  }
  // A page mixing live and test-mode methods marks the test-mode ones (the header's badge marks a page all in test mode).
  return html`<section class="card" id="method-${name}" aria-labelledby="heading-${name}">
<h2 id="heading-${name}">${labelOf(name)}</h2>
${entry.testMode && !view.testMode ? html`<p><span class="badge">Test mode: no real money moves</span></p>` : ""}
${body}
</section>`;
}

/** checkoutPage renders the payment page, or the intent's settled state without any form. */
export function checkoutPage(view: CheckoutView, options: { action: string; csrf: string; errors?: FieldError[] }): string {
  const { intent } = view;
  const { status } = intent;
  if (status !== "pending") {
    const state = stateMessages[status];
    return page(
      `${state.title} · ${view.merchantName}`,
      html`${header(view)}<section class="card notice" id="state" data-status="${status}"><h2>${state.title}</h2><p>${state.text}</p></section>`,
    );
  }
  const errors = options.errors ?? [];
  return page(
    `Pay ${formatNaira(intent.amount)} to ${view.merchantName}`,
    html`${header(view)}
${errors.length > 0 ? html`<p class="error" role="alert">Please correct the card details below.</p>` : ""}
${view.methods.length > 1 ? html`<nav aria-label="Payment methods">${view.methods.map((m) => html`<a href="#method-${m.method.type}">${labelOf(m.method.type)}</a>`)}</nav>` : ""}
${view.methods.map((m) => methodSection(view, m, options.action, options.csrf, errors))}
<p class="muted">Reference ${intent.clientReference} · ${view.attemptsLeft} ${view.attemptsLeft === 1 ? "attempt" : "attempts"} left</p>`,
  );
}

/**
 * resultPage is shown after an attempt when the merchant gave no callbackUrl,
 * and while an attempt's outcome is not known yet (refreshPath asks again).
 */
export function resultPage(intent: PaymentIntentRecord, attempt: PaymentAttemptRecord, checkoutPath: string, refreshPath = checkoutPath): string {
  if (attempt.outcome === "processing") {
    return page(
      "Payment processing",
      html`<section class="card notice" id="result" data-status="processing"><h1>Payment processing</h1>
<p>We are waiting for your bank to confirm your payment of ${formatNaira(attempt.amount)}. This can take a few minutes; you will not be charged twice.</p>
<p><a href="${refreshPath}">Refresh</a></p></section>`,
    );
  }
  if (attempt.outcome === "requires_action" && attempt.nextActionUrl) {
    return page(
      "Confirm your payment",
      html`<section class="card notice" id="result" data-status="requires_action"><h1>Confirm your payment</h1>
<p>Your bank needs you to confirm this payment.</p>
<p><a href="${attempt.nextActionUrl}">Continue to your bank</a></p></section>`,
    );
  }
  if (attempt.outcome === "succeeded") {
    return page(
      "Payment successful",
      html`<section class="card notice" id="result" data-status="successful"><h1>Payment successful</h1>
<p>${formatNaira(attempt.amount)} paid. Reference <strong>${attempt.processorReference}</strong>.</p>
<p class="muted">You can close this page.</p></section>`,
    );
  }
  return page(
    "Payment declined",
    html`<section class="card notice" id="result" data-status="failed"><h1>Payment declined</h1>
<p>${attempt.declineReason ?? "The payment was declined."}</p>
${retryHint(intent, checkoutPath)}
</section>`,
  );
}

/** What a declined attempt's result page offers next, given where the intent is now. */
function retryHint(intent: PaymentIntentRecord, checkoutPath: string): SafeHtml {
  if (intent.status === "pending") return html`<p><a href="${checkoutPath}">Try again</a></p>`;
  if (intent.status === "successful") return html`<p>This payment has since been made.</p>`;
  return html`<p>This payment can no longer be made.</p>`;
}

/** testThreeDsPage is the test processor's 3-D Secure page: approve or deny, as a bank's page would ask. */
export function testThreeDsPage(action: string): string {
  return page(
    "Test 3-D Secure",
    html`<section class="card"><h1>Test 3-D Secure</h1>
<p class="muted">Test mode: this page stands for the card issuer's confirmation page.</p>
<form method="post" action="${action}"><input type="hidden" name="decision" value="approve"><button type="submit" id="approve">Approve</button></form>
<form method="post" action="${action}"><input type="hidden" name="decision" value="deny"><button type="submit" id="deny">Deny</button></form></section>`,
  );
}

/** notFoundPage reveals nothing about why: unknown and altered tokens look the same. */
export function notFoundPage(): string {
  return page("Payment page not found", html`<section class="card"><h1>Payment page not found</h1><p>Check the link you were given.</p></section>`);
}

/** messagePage is a plain message, for refused form posts and the like. */
export function messagePage(title: string, text: string, backPath?: string): string {
  return page(
    title,
    html`<section class="card"><h1>${title}</h1><p>${text}</p>${backPath ? html`<p><a href="${backPath}">Back to the payment page</a></p>` : ""}</section>`,
  );
}
