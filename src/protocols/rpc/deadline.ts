import { Code, ConnectError } from "@connectrpc/connect";

const grpcUnits: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000001 };

/**
 * timeoutOf reads the client's deadline: grpc-timeout (gRPC, gRPC-Web: at
 * most 8 digits and a unit, doc/PROTOCOL-HTTP2.md) or connect-timeout-ms
 * (Connect: at most 10 digits of milliseconds). undefined when none was sent;
 * a malformed value is InvalidArgument.
 */
export function timeoutOf(grpcTimeout: string | undefined, connectTimeoutMs: string | undefined): number | undefined {
  if (grpcTimeout !== undefined) {
    const match = /^(\d{1,8})([HMSmun])$/.exec(grpcTimeout);
    if (!match) throw new ConnectError("grpc-timeout is not a valid timeout", Code.InvalidArgument);
    return Number(match[1]) * grpcUnits[match[2]!]!;
  }
  if (connectTimeoutMs !== undefined) {
    if (!/^\d{1,10}$/.test(connectTimeoutMs)) throw new ConnectError("connect-timeout-ms is not a valid timeout", Code.InvalidArgument);
    return Number(connectTimeoutMs);
  }
  return undefined;
}
