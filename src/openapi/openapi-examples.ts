import { STATUS_CODES } from "node:http";

/** One named example of a body (OpenAPI 3.1 §4.8.19). */
export interface Example {
  summary: string;
  value: unknown;
}

/** Examples by name; tools take the first as the default. */
export type Examples = Record<string, Example>;

/** The settings the examples depend on. */
export interface OpenApiExamplesOptions {
  /** PUBLIC_URL: the origin of the example checkoutLink. */
  publicUrl: string;
  /** BASE_PATH: the prefix of the example paths in messages. */
  basePath: string;
}

/** What the document shows for each body. */
export interface OpenApiExamples {
  createPaymentIntentRequest: Examples;
  paymentIntentCreated: Examples;
  paymentIntentReplayed: Examples;
  paymentIntentListItem: Examples;
  paymentIntentPage: Examples;
  paymentIntentDeleted: Examples;
  createSettlementAccountRequest: Examples;
  settlementAccount: Examples;
  settlementAccountList: Examples;
  /** The error body of each status the API answers with. */
  errors: Record<number, Examples>;
}

const intentId = "pi_019aa3c4-0f7d-7e21-8a64-93b25c1d7e08";
const accountId = "sa_019aa3c2-5e10-7b3c-9d2e-41f7a8c06b15";
const createdAt = "2026-11-21T14:30:11.579Z";

const error = (status: number, message: string) => ({ status, title: STATUS_CODES[status], message });

/**
 * createOpenApiExamples builds an example of every request body and response
 * of the document, as the service really answers (the messages are its own).
 * Tools use them: Swagger UI's try-it-out and Postman collections send the
 * first request example instead of "<integer>" placeholders, mock servers
 * answer with the responses. Spectral and Redocly check each against its
 * schema (npm run lint:openapi), so they cannot drift from the schemas.
 */
export function createOpenApiExamples(options: OpenApiExamplesOptions): OpenApiExamples {
  const account = {
    id: accountId,
    accountName: "Ada Stores Ltd",
    accountNumber: "0123456789",
    bankName: "Example Bank",
    bankCode: "058",
    createdAt: "2026-11-20T09:12:45.031Z",
    updatedAt: "2026-11-20T09:12:45.031Z",
  };
  const createRequest = {
    amount: 50000,
    customerEmail: "ada@example.com",
    clientReference: "order-1001",
    paymentMethod: ["card", "bank_transfer"],
    callbackUrl: "https://shop.example.com/paid",
  };
  const intentFields = {
    id: intentId,
    amount: "50000",
    totalAmount: "50000",
    currency: "NGN",
    receiptEmail: "ada@example.com",
    customerEmail: "ada@example.com",
    country: "NG",
    status: "pending",
    checkoutLink: `${options.publicUrl}/checkout/Xq3v9yR2mT8kLp4wZ7nB1cD5fG6hJ0aE2sU4iO8eQ1w`,
    clientReference: "order-1001",
    paymentMethods: [
      { id: "pm_card", type: "card", attributes: [{ name: "Visa" }, { name: "Mastercard" }, { name: "Verve" }] },
      { id: "pm_bank_transfer", type: "bank_transfer", attributes: [{ name: "Virtual account" }] },
    ],
    callbackUrl: "https://shop.example.com/paid",
    transaction: null,
    meta: [],
  };
  const intent = { ...intentFields, settlementAccounts: [], createdAt, updatedAt: createdAt };
  const intentWithSplit = {
    ...intentFields,
    id: "pi_019aa3c5-2a41-7c08-b1f3-0d6e94a2c731",
    clientReference: "order-1002",
    settlementAccounts: [{ settlementAccountId: accountId, splitAmount: "45000" }],
    createdAt: "2026-11-21T14:31:02.114Z",
    updatedAt: "2026-11-21T14:31:02.114Z",
  };
  const listItem = { ...intentFields, settlementAccount: account, createdAt, updatedAt: createdAt };
  const paid = {
    ...listItem,
    status: "successful",
    transaction: "txn_test_4f9a0c2e7b1d83a65e0f2c49",
    updatedAt: "2026-11-21T14:33:40.802Z",
  };

  return {
    createPaymentIntentRequest: {
      basic: { summary: "Card or bank transfer, back to the shop after paying", value: createRequest },
      withSplit: {
        summary: "With part of the amount split to a settlement account (register it first)",
        value: {
          ...createRequest,
          clientReference: "order-1002",
          settlementAccounts: [{ settlementAccountId: accountId, splitAmount: 45000 }],
        },
      },
      minimal: {
        summary: "Only the required fields: every enabled payment method",
        value: { amount: 250000, customerEmail: "ada@example.com", clientReference: "order-1003" },
      },
    },
    paymentIntentCreated: {
      basic: { summary: "A new pending intent", value: intent },
      withSplit: { summary: "With a split", value: intentWithSplit },
    },
    paymentIntentReplayed: { basic: { summary: "The intent stored for order-1001", value: intent } },
    paymentIntentListItem: {
      pending: { summary: "Waiting for the customer", value: listItem },
      successful: { summary: "Paid: transaction is set", value: paid },
    },
    paymentIntentPage: {
      firstPage: {
        summary: "A page with another after it",
        value: { paymentIntents: [paid], nextPageToken: "AZqjxA99fiGKZJOyXB1-CGQAAAABmhBzIwABmQ" },
      },
      lastPage: { summary: "The last page: no nextPageToken", value: { paymentIntents: [listItem] } },
    },
    paymentIntentDeleted: {
      deleted: { summary: "Cancelled", value: { status: 200, title: "OK", message: `Payment intent ${intentId} deleted` } },
    },
    createSettlementAccountRequest: {
      nuban: {
        summary: "A ten-digit NUBAN at a bank",
        value: { accountName: "Ada Stores Ltd", accountNumber: "0123456789", bankName: "Example Bank", bankCode: "058" },
      },
    },
    settlementAccount: { registered: { summary: "Registered", value: account } },
    settlementAccountList: { accounts: { summary: "Every account, newest first", value: { settlementAccounts: [account] } } },
    errors: {
      400: {
        badValue: { summary: "A bad value", value: error(400, "amount must be an integer") },
        unknownField: { summary: "A field the API does not have", value: error(400, "unknown field amout") },
        badQuery: { summary: "A bad query parameter", value: error(400, "pageSize must be an integer from 1 to 100") },
      },
      401: { invalidKey: { summary: "An unknown API key", value: error(401, "API key is not valid") } },
      404: {
        unknownIntent: { summary: "No such intent for this merchant", value: error(404, `payment intent ${intentId} not found`) },
      },
      405: {
        wrongMethod: {
          summary: "A method the path does not have",
          value: error(405, `PATCH is not allowed on ${options.basePath}/v2/payment-intents/${intentId}`),
        },
      },
      409: {
        referenceReused: {
          summary: "A used clientReference with a different request",
          value: error(409, `clientReference order-1001 is already used by payment intent ${intentId} with a different request`),
        },
        notPending: {
          summary: "Cancelling an intent that is no longer pending",
          value: error(409, `payment intent ${intentId} is successful and can no longer be deleted`),
        },
        accountRegistered: {
          summary: "An account registered twice",
          value: error(409, `account 0123456789 at bank 058 is already registered as ${accountId}`),
        },
      },
      413: { tooLarge: { summary: "A body over 64 KiB", value: error(413, "request body is larger than 65536 bytes") } },
      415: { notJson: { summary: "Not application/json", value: error(415, "Content-Type must be application/json") } },
      429: {
        rateLimited: {
          summary: "Over the key's rate limit",
          value: error(429, "rate limit exceeded: at most 100 requests per second per API key, bursts of 200; retry after 1 s"),
        },
      },
      500: { internal: { summary: "An unexpected failure", value: error(500, "internal error") } },
      503: { unavailable: { summary: "The database is down", value: error(503, "the database is unavailable; retry later") } },
    },
  };
}
