import assert from "node:assert/strict";
import { expectJson, uniqueReference, type PaymentIntentJson, type RestClient } from "../../support/rest-client.js";

/** The cookie the checkout page sets for its CSRF nonce. */
export const csrfCookieName = "checkout_csrf";

/** The test cards of the test-mode processor (issue 4). */
export const cards = {
  succeeds: "4084 0840 8408 4081",
  declined: "4000 0000 0000 0002",
  /** Luhn-valid, but not a test card. */
  otherValid: "4111 1111 1111 1111",
  /** 4084 0840 8408 4081 with its check digit changed. */
  luhnInvalid: "4084 0840 8408 4082",
} as const;

/** An expiry date comfortably in the future of every clock the suites use. */
export const goodExpiry = "12/39";

/** A finished response with its body read; redirects are not followed. */
export interface PageResponse {
  status: number;
  headers: Headers;
  html: string;
}

/** A checkout page as a browser holds it: the page, and the cookie and field its forms need. */
export interface OpenedCheckout extends PageResponse {
  token: string;
  /** "checkout_csrf=<nonce>", as a browser would send it back. */
  cookie: string;
  /** The hidden csrf field of the page's forms. */
  csrf: string;
}

export interface CreateOptions {
  amount?: number;
  paymentMethod?: string[];
  callbackUrl?: string;
  customerEmail?: string;
}

/** createIntent creates an intent for merchantA over REST. */
export async function createIntent(client: RestClient, options: CreateOptions = {}): Promise<PaymentIntentJson> {
  const body: Record<string, unknown> = {
    amount: options.amount ?? 50000,
    customerEmail: options.customerEmail ?? "ada@example.com",
    clientReference: uniqueReference("chk"),
  };
  if (options.paymentMethod) body.paymentMethod = options.paymentMethod;
  if (options.callbackUrl) body.callbackUrl = options.callbackUrl;
  return expectJson<PaymentIntentJson>(await client.createIntent(body), 201);
}

/** tokenOf is the secret path segment of a checkoutLink. */
export function tokenOf(checkoutLink: string): string {
  const token = new URL(checkoutLink).pathname.split("/")[2];
  assert.ok(token, `no token in ${checkoutLink}`);
  return token;
}

/** getPage fetches a page without following redirects. */
export async function getPage(url: string, headers: Record<string, string> = {}): Promise<PageResponse> {
  const res = await fetch(url, { redirect: "manual", headers });
  return { status: res.status, headers: res.headers, html: await res.text() };
}

/** openCheckout loads the checkout page and reads its CSRF cookie and field, as a browser would. */
export async function openCheckout(checkoutLink: string): Promise<OpenedCheckout> {
  const page = await getPage(checkoutLink);
  assert.equal(page.status, 200, page.html);
  const setCookie = page.headers.get("set-cookie") ?? "";
  const cookie = setCookie.split(";")[0]!;
  assert.match(cookie, new RegExp(`^${csrfCookieName}=[A-Za-z0-9_-]+$`), `no csrf cookie in ${JSON.stringify(setCookie)}`);
  const csrf = hiddenField(page.html, "csrf");
  assert.ok(csrf, "the page carries a csrf field");
  return { ...page, token: tokenOf(checkoutLink), cookie, csrf };
}

/** hiddenField reads the first value of a hidden input by name. */
export function hiddenField(html: string, name: string): string | undefined {
  return new RegExp(`<input type="hidden" name="${name}" value="([^"]*)"`).exec(html)?.[1];
}

export interface PostOptions {
  cookie?: string | null;
  origin?: string;
  contentType?: string;
  method?: string;
}

/** postForm submits a checkout form like a browser: urlencoded, with the cookie, no redirect following. */
export async function postForm(url: string, fields: Record<string, string>, options: PostOptions = {}): Promise<PageResponse> {
  const headers: Record<string, string> = {
    "content-type": options.contentType ?? "application/x-www-form-urlencoded",
  };
  if (options.cookie) headers.cookie = options.cookie;
  if (options.origin) headers.origin = options.origin;
  const res = await fetch(url, {
    method: options.method ?? "POST",
    headers,
    body: new URLSearchParams(fields).toString(),
    redirect: "manual",
  });
  return { status: res.status, headers: res.headers, html: await res.text() };
}

/** payUrl is where the page's forms post. */
export function payUrl(checkoutLink: string): string {
  return `${checkoutLink}/pay`;
}

/** payByCard posts the card form of an opened page. */
export function payByCard(
  checkoutLink: string,
  opened: OpenedCheckout,
  card: { number: string; expiry?: string; cvv?: string },
): Promise<PageResponse> {
  return postForm(
    payUrl(checkoutLink),
    { csrf: opened.csrf, method: "card", card_number: card.number, card_expiry: card.expiry ?? goodExpiry, card_cvv: card.cvv ?? "123" },
    { cookie: opened.cookie },
  );
}

/** confirm posts the one-button form of bank_transfer or ussd. */
export function confirm(checkoutLink: string, opened: OpenedCheckout, method: string): Promise<PageResponse> {
  return postForm(payUrl(checkoutLink), { csrf: opened.csrf, method }, { cookie: opened.cookie });
}

/** seeOther asserts a 303 and returns its target, resolved against base. */
export function seeOther(res: PageResponse, base: string): URL {
  assert.equal(res.status, 303, `expected 303, got ${res.status}: ${res.html}`);
  const location = res.headers.get("location");
  assert.ok(location, "a 303 carries Location");
  return new URL(location, base);
}

/** textOf strips tags and collapses whitespace, so assertions read like the page does. */
export function textOf(html: string): string {
  return html
    .replace(/<style[\s\S]*?<\/style>/g, " ")
    .replace(/<[^>]+>/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/\s+/g, " ")
    .trim();
}

/** formCount counts the <form> elements of a page. */
export function formCount(html: string): number {
  return (html.match(/<form\b/g) ?? []).length;
}
