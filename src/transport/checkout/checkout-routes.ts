import { Code, ConnectError } from "@connectrpc/connect";
import type { PaymentAttemptRecord } from "../../domain/payment-attempt.js";
import type { PaymentIntentRecord } from "../../domain/payment-intent.js";
import type { Logger } from "../../lib/logger.js";
import { pathOf, type HttpRoute } from "../../http/http-route.js";
import type { NodeRequest, NodeResponse } from "../../http/node-http.js";
import type { CheckoutService, CheckoutView } from "../../service/checkout-service.js";
import { readHttpUrl } from "../../rules/http-url.js";
import { BodyTooLarge, ClientGone, readBody } from "../../http/read-body.js";
import type { RequestContext } from "../../http/request-context.js";
import { checkoutPage, messagePage, notFoundPage, resultPage, testThreeDsPage } from "./checkout-pages.js";
import type { Csrf } from "./csrf.js";
import { checkoutCssHash } from "./html.js";
import { checkoutTokenSource } from "../../lib/checkout-token.js";

export interface CheckoutRoutesOptions {
  checkout: CheckoutService;
  csrf: Csrf;
  /** The service's public origin: form posts must come from it. */
  publicUrl: string;
  logger: Logger;
  /** The test processor's 3-D Secure answer (test mode only): where to send the customer after it, undefined for no such attempt. */
  testThreeDs?: (idempotencyKey: string, approve: boolean) => string | undefined;
}

const maxFormBytes = 4096;

/**
 * createCheckoutRoutes serves the customer's checkout pages: server-rendered
 * HTML without scripts, behind a strict Content-Security-Policy, with forms
 * protected against cross-site submission. The token in the path is the only
 * credential; every answer for a token that does not exist is the same 404.
 * Each attempt ends in a 303 to the merchant's callbackUrl (with reference, id,
 * status and attempt_status added to its query) or to a result page.
 */
export function createCheckoutRoutes(options: CheckoutRoutesOptions): HttpRoute[] {
  const publicOrigin = new URL(options.publicUrl).origin;

  function send(res: NodeResponse, status: number, body: string, headers: Record<string, string> = {}, formTarget?: string) {
    // Form posts are answered with a redirect to the merchant: CSP's
    // form-action covers redirect targets, so the callback origin is allowed.
    const formAction = ["'self'", formTarget].filter(Boolean).join(" ");
    res.writeHead(status, {
      "content-type": "text/html; charset=utf-8",
      "content-length": Buffer.byteLength(body),
      "content-security-policy": `default-src 'none'; style-src '${checkoutCssHash}'; img-src 'self'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
      "cache-control": "no-store",
      "referrer-policy": "same-origin",
      "x-content-type-options": "nosniff",
      "x-frame-options": "DENY",
      ...headers,
    });
    res.end(body);
  }

  function redirect(res: NodeResponse, location: string) {
    res.writeHead(303, { location, "cache-control": "no-store", "referrer-policy": "no-referrer", "content-length": 0 });
    res.end("");
  }

  /**
   * The intent's callbackUrl, checked again as it is read: a value stored
   * before the URL rule (a host with ";" or ",", a tab) must reach neither the
   * Content-Security-Policy nor a Location header, and one URL() refuses must
   * not break the page. Such a value counts as no callbackUrl.
   */
  function callbackOf(intent: PaymentIntentRecord): URL | undefined {
    if (!intent.callbackUrl) return undefined;
    const url = readHttpUrl(intent.callbackUrl);
    return url instanceof URL ? url : undefined;
  }

  const callbackOrigin = (intent: PaymentIntentRecord) => callbackOf(intent)?.origin;

  /**
   * Where the page's forms may lead, for its form-action: the merchant's
   * callback origin, and the processor pages its methods send the customer
   * to (Paystack's), since the browser checks a form post's redirect too.
   */
  function formTargetsOf(view: CheckoutView): string | undefined {
    const targets = new Set<string>();
    const callback = callbackOrigin(view.intent);
    if (callback) targets.add(callback);
    for (const { instructions } of view.methods) {
      if (instructions.kind === "processor" && instructions.redirectsTo) targets.add(instructions.redirectsTo);
    }
    return targets.size > 0 ? [...targets].join(" ") : undefined;
  }

  /**
   * Where the customer goes after an attempt: the processor's page while it
   * requires action, our result page while it is processing (it refreshes
   * to the return URL), else the merchant's callback or our result page.
   */
  function afterAttempt(token: string, intent: PaymentIntentRecord, attempt: PaymentAttemptRecord): string {
    if (attempt.outcome === "requires_action" && attempt.nextActionUrl) return attempt.nextActionUrl;
    const url = attempt.outcome === "processing" ? undefined : callbackOf(intent);
    if (!url) return `/checkout/${token}/result?attempt=${encodeURIComponent(attempt.id)}`;
    return withOutcome(url, intent, attempt.outcome);
  }

  /**
   * withOutcome adds what the merchant's page needs to the callback's query:
   * reference and id name the intent; status is the intent's status now
   * (successful, pending or failed) and attempt_status the attempt's outcome
   * (succeeded or declined). A first decline with attempts left is
   * attempt_status=declined&status=pending: the customer may still pay
   * (docs/payments.md says what to show).
   */
  function withOutcome(url: URL, intent: PaymentIntentRecord, outcome: PaymentAttemptRecord["outcome"]): string {
    url.searchParams.set("reference", intent.clientReference);
    url.searchParams.set("id", intent.id);
    url.searchParams.set("status", intent.status);
    url.searchParams.set("attempt_status", outcome);
    return url.toString();
  }

  async function showPage(req: NodeRequest, res: NodeResponse, token: string) {
    const view = await options.checkout.view(token);
    const { nonce, isNew } = options.csrf.nonceFor(header(req, "cookie"));
    const body = checkoutPage(view, { action: `/checkout/${token}/pay`, csrf: options.csrf.fieldFor(token, nonce) });
    send(res, 200, body, isNew ? { "set-cookie": options.csrf.cookie(nonce) } : {}, formTargetsOf(view));
  }

  async function pay(req: NodeRequest, res: NodeResponse, token: string) {
    const checkoutPath = `/checkout/${token}`;
    const type = (header(req, "content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (type !== "application/x-www-form-urlencoded") {
      return send(res, 415, messagePage("Unsupported form", "This form could not be read.", checkoutPath));
    }
    const form = new URLSearchParams((await readBody(req, maxFormBytes)).toString("utf8"));
    const origin = header(req, "origin");
    // A post must come from our own pages: a foreign Origin, and "null" (an
    // opaque origin: a sandboxed frame, a data: page), is refused. Our pages
    // send Referrer-Policy: same-origin, so a browser names our origin on
    // their form posts (with no-referrer it would send "null").
    if (!options.csrf.verify(token, header(req, "cookie"), form.get("csrf") ?? undefined) || (origin !== undefined && origin !== publicOrigin)) {
      return send(res, 403, messagePage("Please try again", "This form has expired. Reload the payment page and try again.", checkoutPath));
    }
    const result = await options.checkout.pay(token, {
      method: form.get("method") ?? "",
      card: { number: form.get("card_number") ?? "", expiry: form.get("card_expiry") ?? "", cvv: form.get("card_cvv") ?? "" },
    });
    switch (result.kind) {
      case "form-errors": {
        const { nonce } = options.csrf.nonceFor(header(req, "cookie"));
        const body = checkoutPage(result.view, { action: `/checkout/${token}/pay`, csrf: options.csrf.fieldFor(token, nonce), errors: result.errors });
        return send(res, 422, body, {}, formTargetsOf(result.view));
      }
      case "not-payable": {
        // Paid in another tab, expired, cancelled, or an attempt is with the
        // processor. A repeated submit of a paid intent ends where the first one did.
        const intent = result.view.intent;
        const url = callbackOf(intent);
        if (intent.status === "successful" && url) return redirect(res, withOutcome(url, intent, "succeeded"));
        return redirect(res, checkoutPath);
      }
      case "attempted":
        return redirect(res, afterAttempt(token, result.intent, result.attempt));
    }
  }

  /**
   * The processor sent the customer back: the attempt is asked about and
   * settled, then handed to the merchant (or shown). One still open is sent
   * back to the processor's page only while the processor waits for the
   * customer there; otherwise the customer waits on our processing page,
   * which asks again on refresh.
   */
  async function returned(res: NodeResponse, token: string, attemptId: string | null) {
    const found = attemptId ? await options.checkout.returned(token, attemptId) : undefined;
    if (!found) return send(res, 404, notFoundPage());
    const { intent, attempt } = found;
    const waiting = attempt.outcome === "processing" || (attempt.outcome === "requires_action" && !found.awaitingCustomer);
    if (waiting) return send(res, 200, resultPage(intent, { ...attempt, outcome: "processing" }, `/checkout/${token}`, returnPath(token, attempt.id)));
    redirect(res, afterAttempt(token, intent, attempt));
  }

  /** The test processor's 3-D Secure page, and its answer (which sends the customer back to the return URL). */
  async function threeDs(req: NodeRequest, res: NodeResponse, key: string) {
    if (!options.testThreeDs) return send(res, 404, notFoundPage());
    if (req.method === "GET") return send(res, 200, testThreeDsPage(`/checkout/test-3ds/${encodeURIComponent(key)}`));
    const form = new URLSearchParams((await readBody(req, maxFormBytes)).toString("utf8"));
    const back = options.testThreeDs(key, form.get("decision") === "approve");
    if (!back) return send(res, 404, notFoundPage());
    redirect(res, back);
  }

  async function showResult(res: NodeResponse, token: string, attemptId: string | null) {
    const view = await options.checkout.view(token);
    const attempt = attemptId ? await options.checkout.attemptOf(token, attemptId) : undefined;
    if (!attempt) return send(res, 404, notFoundPage());
    send(res, 200, resultPage(view.intent, attempt, `/checkout/${token}`, returnPath(token, attempt.id)));
  }

  /** Runs one checkout action, turning the service's refusals into customer pages. */
  async function serve(req: NodeRequest, res: NodeResponse, context: RequestContext, action: (token: string) => Promise<void>) {
    const token = tokenOf(pathOf(req.url));
    try {
      await action(token);
    } catch (error) {
      if (error instanceof ClientGone) {
        context.clientGone = true;
        return;
      }
      if (error instanceof ConnectError && error.code === Code.NotFound) return send(res, 404, notFoundPage());
      if (error instanceof ConnectError && error.code === Code.InvalidArgument) {
        return send(res, 400, messagePage("Please try again", error.rawMessage, `/checkout/${token}`));
      }
      if (error instanceof BodyTooLarge) return send(res, 413, messagePage("Form too large", "This form could not be read."));
      if (error instanceof ConnectError && error.code === Code.Unavailable) {
        return send(res, 503, messagePage("Please try again shortly", "Payments are briefly unavailable."), { "retry-after": "5" });
      }
      options.logger.error(
        { requestId: context.requestId, route: context.route, err: error instanceof Error ? error.message : String(error) },
        "checkout failed",
      );
      return send(res, 500, messagePage("Something went wrong", "Please check with the merchant before you try again."));
    }
  }

  // The token is a secret: logs and metrics see only the templates.
  return [
    {
      name: "/checkout/{token}",
      methods: ["GET"],
      matches: (path) => pagePattern.test(path),
      handle: (req, res, context) => serve(req, res, context, (token) => showPage(req, res, token)),
    },
    {
      name: "/checkout/{token}/pay",
      methods: ["POST"],
      matches: (path) => payPattern.test(path),
      handle: (req, res, context) => serve(req, res, context, (token) => pay(req, res, token)),
    },
    {
      name: "/checkout/{token}/result",
      methods: ["GET"],
      matches: (path) => resultPattern.test(path),
      handle: (req, res, context) =>
        serve(req, res, context, (token) => showResult(res, token, new URLSearchParams(queryOf(req.url)).get("attempt"))),
    },
    {
      name: "/checkout/{token}/return",
      methods: ["GET"],
      matches: (path) => returnPattern.test(path),
      handle: (req, res, context) => serve(req, res, context, (token) => returned(res, token, returnedAttemptId(queryOf(req.url)))),
    },
    {
      name: "/checkout/test-3ds/{attempt}",
      methods: ["GET", "POST"],
      matches: (path) => threeDsPattern.test(path),
      handle: (req, res, context) => serve(req, res, context, () => threeDs(req, res, decodeURIComponent(pathOf(req.url).split("/")[3]!))),
    },
    {
      // Anything else under /checkout: the same 404 page an unknown token gets.
      name: "/checkout/{unknown}",
      matches: (path) => path === "/checkout" || path.startsWith("/checkout/"),
      handle: (_req, res) => send(res, 404, notFoundPage()),
    },
  ];
}

/** A checkout path: /checkout/{token}, then the action's suffix. */
const checkoutPath = (suffix: string) => new RegExp(`^/checkout/${checkoutTokenSource}${suffix}$`);
const pagePattern = checkoutPath("");
const payPattern = checkoutPath("/pay");
const resultPattern = checkoutPath("/result");
const returnPattern = checkoutPath("/return");
const threeDsPattern = /^\/checkout\/test-3ds\/[A-Za-z0-9_-]{1,64}$/;

/** The return URL of an attempt: where the processor sends the customer back, and where a processing page refreshes. */
function returnPath(token: string, attemptId: string): string {
  return `/checkout/${token}/return?attempt=${encodeURIComponent(attemptId)}`;
}

/**
 * The attempt a return URL names: Paystack adds its transaction's
 * `reference` (our attempt id, as initialize set it) to the callback_url it
 * was given, so it is read first, whatever Paystack did to our own query;
 * other processors send the `attempt` we gave back.
 */
function returnedAttemptId(query: string): string | null {
  const params = new URLSearchParams(query);
  return params.get("reference") ?? params.get("attempt");
}

/** The token segment of a checkout path the patterns above accepted. */
function tokenOf(path: string): string {
  return path.split("/")[2]!;
}

function queryOf(target: string | undefined): string {
  const at = (target ?? "").indexOf("?");
  return at < 0 ? "" : target!.slice(at + 1);
}

function header(req: NodeRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join("; ") : value;
}
