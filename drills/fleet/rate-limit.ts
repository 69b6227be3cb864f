import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { PaymentIntentService } from "../../gen/payments/v2/payment_intent_pb.js";
import type { DrillReport } from "../support/drill-report.js";
import type { Fleet, FleetMerchant } from "../support/fleet.js";

export interface RateLimitOptions {
  /** RATE_LIMIT_RPS the fleet runs with (RATE_LIMIT_BURST the same: one-second windows in Redis). */
  ratePerSecond: number;
  /** How long each phase goes flat out. */
  seconds: number;
  /** Requests in flight at once. */
  concurrency: number;
}

interface Phase {
  name: string;
  accepted: number;
  limited: number;
  other: string[];
}

/**
 * runRateLimit sends requests flat out with one key through HAProxy, over
 * REST and over gRPC with one and with three client connections (each phase
 * with a fresh key, so each starts a fresh window), to a fleet whose
 * instances share their limits through Redis. The accepted rate must be the
 * configured one within 10 %, beyond the one window a fixed-window limiter
 * may add (README, Limits): RATE_LIMIT_RPS × T ≤ accepted ≤ RATE_LIMIT_RPS ×
 * T + RATE_LIMIT_BURST, ±10 %. Without Redis, three instances would accept
 * three times the limit.
 */
export async function runRateLimit(fleet: Fleet, options: RateLimitOptions): Promise<DrillReport> {
  const [restKey, oneConnectionKey, threeConnectionsKey] = fleet.merchants.slice(1) as [FleetMerchant, FleetMerchant, FleetMerchant];
  const phases: Phase[] = [];

  phases.push(
    await flatOut("REST through HAProxy", options, async () => {
      const res = await fetch(`${fleet.haproxy.httpUrl}/v1/v2/payment-intents?pageSize=1`, { headers: { authorization: `Bearer ${restKey.key}` } });
      await res.arrayBuffer();
      return res.status === 200 ? "accepted" : res.status === 429 ? "limited" : String(res.status);
    }),
  );
  for (const [name, merchant, connections] of [
    ["gRPC through HAProxy, 1 connection", oneConnectionKey, 1],
    ["gRPC through HAProxy, 3 connections", threeConnectionsKey, 3],
  ] as const) {
    const transports: Transport[] = Array.from({ length: connections }, () => createGrpcTransport({ baseUrl: fleet.haproxy.grpcUrl }));
    const clients = transports.map((transport) => createClient(PaymentIntentService, transport));
    let next = 0;
    phases.push(
      await flatOut(name, options, async () => {
        const client = clients[next++ % clients.length]!;
        try {
          await client.listPaymentIntents({ pageSize: 1 }, { headers: { authorization: `Bearer ${merchant.key}` } });
          return "accepted";
        } catch (error) {
          const code = error instanceof ConnectError ? error.code : undefined;
          return code === Code.ResourceExhausted ? "limited" : `${code === undefined ? String(error) : Code[code]}`;
        }
      }),
    );
  }

  const expected = options.ratePerSecond * options.seconds;
  const lowest = expected * 0.9;
  const highest = (expected + options.ratePerSecond) * 1.1;
  const passed = phases.every((p) => p.accepted >= lowest && p.accepted <= highest && p.other.length === 0);
  const rate = (p: Phase) => p.accepted / options.seconds;
  return {
    name: "Fleet: one key flat out, limits in Redis",
    did: `one key at a time, ${options.concurrency} requests in flight for ${options.seconds} s, to three instances sharing RATE_LIMIT_RPS=${options.ratePerSecond} (RATE_LIMIT_BURST=${options.ratePerSecond}) through Redis, over REST and gRPC through HAProxy`,
    headline: phases.map((p) => `${p.name}: ${rate(p).toFixed(1)}/s accepted`).join("; ") + ` (limit ${options.ratePerSecond}/s; accepted ${Math.round(lowest)}–${Math.round(highest)} allowed in ${options.seconds} s)`,
    figures: phases.map(
      (p) =>
        `${p.name}: ${p.accepted} accepted (${((rate(p) / options.ratePerSecond - 1) * 100).toFixed(1)} % from the limit), ${p.limited} answered 429 / ResourceExhausted${p.other.length ? `, other: ${p.other.slice(0, 3).join(", ")}` : ""}`,
    ),
    passed,
  };
}

/** Keeps options.concurrency calls in flight for options.seconds and counts what came back. */
async function flatOut(name: string, options: RateLimitOptions, call: () => Promise<string>): Promise<Phase> {
  const phase: Phase = { name, accepted: 0, limited: 0, other: [] };
  const ends = performance.now() + options.seconds * 1000;
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (performance.now() < ends) {
        const outcome = await call().catch((error: unknown) => String(error));
        // A call that ends after the period is not counted: the period is what is measured.
        if (performance.now() > ends) break;
        if (outcome === "accepted") phase.accepted++;
        else if (outcome === "limited") phase.limited++;
        else phase.other.push(outcome);
      }
    }),
  );
  return phase;
}
