import assert from "node:assert/strict";
import type { Interceptor, Transport } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";

/** RpcProtocol is one way a generated client reaches the server. */
export interface RpcProtocol {
  name: string;
  /** The response Content-Type that proves the call really used this protocol. */
  contentType: RegExp;
  transport(baseUrl: string, interceptors: Interceptor[]): Transport;
}

/** The four client transports of connect-node; the server must answer all of them on one port. */
export const rpcProtocols: RpcProtocol[] = [
  {
    name: "Connect JSON over HTTP/1.1",
    contentType: /^application\/json\b/,
    transport: (baseUrl, interceptors) =>
      createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: false, interceptors }),
  },
  {
    name: "Connect binary over HTTP/2",
    contentType: /^application\/proto\b/,
    transport: (baseUrl, interceptors) =>
      createConnectTransport({ baseUrl, httpVersion: "2", useBinaryFormat: true, interceptors }),
  },
  {
    name: "gRPC-Web over HTTP/1.1",
    contentType: /^application\/grpc-web(\+proto)?\b/,
    transport: (baseUrl, interceptors) => createGrpcWebTransport({ baseUrl, httpVersion: "1.1", interceptors }),
  },
  {
    name: "gRPC over HTTP/2",
    contentType: /^application\/grpc(\+proto)?$/,
    transport: (baseUrl, interceptors) => createGrpcTransport({ baseUrl, interceptors }),
  },
];

/**
 * expectConnectError awaits a call that must fail and checks its code (and
 * raw message, when given); it returns the error for further checks.
 */
export async function expectConnectError(
  call: Promise<unknown>,
  code: Code,
  rawMessage?: string | RegExp,
): Promise<ConnectError> {
  const error: unknown = await call.then(
    (value) => assert.fail(`expected ${Code[code]}, the call succeeded with ${String(value)}`),
    (reason: unknown) => reason,
  );
  assert.ok(error instanceof ConnectError, `expected a ConnectError, got ${String(error)}`);
  assert.equal(error.code, code, `expected ${Code[code]}, got ${Code[error.code]}: ${error.rawMessage}`);
  if (typeof rawMessage === "string") assert.equal(error.rawMessage, rawMessage);
  else if (rawMessage) assert.match(error.rawMessage, rawMessage);
  return error;
}

/** RestReply is a REST answer with its JSON body parsed. */
export interface RestReply {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/** restCall sends one JSON request to the REST gateway. */
export async function restCall(
  url: string,
  init: { method: string; authorization?: string; body?: unknown },
): Promise<RestReply> {
  const headers: Record<string, string> = {};
  if (init.authorization !== undefined) headers["authorization"] = init.authorization;
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(url, {
    method: init.method,
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}
