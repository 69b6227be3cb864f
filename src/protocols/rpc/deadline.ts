import { Code, ConnectError } from "@connectrpc/connect";

const grpcUnits: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000001 };

/**
 * grpcTimeoutOf reads gRPC's and gRPC-Web's deadline header, grpc-timeout:
 * at most 8 digits and a unit (doc/PROTOCOL-HTTP2.md), in milliseconds.
 * undefined when none was sent; a malformed value is InvalidArgument.
 */
export function grpcTimeoutOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d{1,8})([HMSmun])$/.exec(value);
  if (!match) throw new ConnectError("grpc-timeout is not a valid timeout", Code.InvalidArgument);
  return Number(match[1]) * grpcUnits[match[2]!]!;
}

/**
 * connectTimeoutOf reads Connect's deadline header, connect-timeout-ms: at
 * most 10 digits of milliseconds (connectrpc.com/docs/protocol). undefined
 * when none was sent; a malformed value is InvalidArgument.
 */
export function connectTimeoutOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,10}$/.test(value)) throw new ConnectError("connect-timeout-ms is not a valid timeout", Code.InvalidArgument);
  return Number(value);
}

/** The longest delay setTimeout honours (2^31-1 ms, about 24.8 days); a longer one fires after 1 ms. */
const maxTimerDelayMs = 2 ** 31 - 1;

/**
 * onDeadline calls expire once now() has reached deadline (epoch ms), and
 * returns what cancels it. Node runs timers on the monotonic clock in whole
 * milliseconds, while deadlines are wall-clock time: a timer can fire a
 * millisecond or more before Date.now() reaches the deadline (more while the
 * wall clock is slewed). An early wake-up waits again for the rest, so
 * nobody told "expired" can find the deadline still ahead. No timer is set
 * for no deadline, nor for one beyond what a timer can wait (gRPC allows
 * 99999999 hours, Connect 10 digits of milliseconds; Node would clamp such a
 * delay to 1 ms, while no request lives that long).
 */
export function onDeadline(deadline: number | undefined, expire: () => void, now: () => number = Date.now): () => void {
  if (deadline === undefined || deadline - now() > maxTimerDelayMs) return () => {};
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    const left = deadline - now();
    if (left <= 0) return expire();
    timer = setTimeout(arm, left);
  };
  arm();
  return () => clearTimeout(timer);
}
