import { Code, ConnectError } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/health/v1/health_pb.js";
import { defineProcedures, type Procedure } from "../pipeline/procedure.js";
import type { Readiness } from "../observability/readiness.js";

export interface GrpcHealthOptions {
  readiness: Pick<Readiness, "check">;
  /** Fully-qualified names of the services this server answers for, e.g. "payments.v2.PaymentIntentService". */
  services: readonly string[];
}

/**
 * createGrpcHealthHandlers implements grpc.health.v1.Health
 * (https://github.com/grpc/grpc/blob/master/doc/health-checking.md) over the
 * same readiness as GET /readyz: SERVING when this instance should receive
 * traffic, NOT_SERVING when it is starting, draining, waiting for migrations
 * or has found its database unreachable for longer than the grace. The empty name is the whole server;
 * every served service shares its status, and any other name is NotFound.
 * Watch answers Unimplemented, which the protocol tells clients to read as
 * "poll Check instead" rather than a failure to retry.
 */
export function createGrpcHealthProcedures(options: GrpcHealthOptions): Procedure[] {
  const known = new Set(["", ...options.services]);
  const status = () =>
    options.readiness.check().ready ? HealthCheckResponse_ServingStatus.SERVING : HealthCheckResponse_ServingStatus.NOT_SERVING;

  return defineProcedures(Health, {
    async check(request) {
      if (!known.has(request.service)) throw new ConnectError(`unknown service ${request.service}`, Code.NotFound);
      return { status: status() };
    },
    async *watch() {
      throw new ConnectError("Watch is not supported: poll Check", Code.Unimplemented);
    },
    async list() {
      const current = status();
      return { statuses: Object.fromEntries([...known].map((name) => [name, { status: current }])) };
    },
  }, { requiresKey: false });
}
