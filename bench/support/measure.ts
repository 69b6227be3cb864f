import { backendTicksSpent, type DatabaseCpuMeter } from "./database-cpu.js";
import type { LoadResult } from "./load-result.js";
import { cpuTicks, threadTicks } from "./proc-stat.js";
import { statementFigures, type StatementFigure } from "./statement-stats.js";

/**
 * A Subject is what one scenario measures, started once per run and driven
 * once per round: the process whose CPU per request is the figure (a server,
 * or for the plain-pg baselines the client process itself) and how to load it.
 */
export interface Subject {
  /** The process whose utime + stime is the figure. */
  readonly pid: number;
  rss(): number;
  peakRss(): number;
  stderrTail(): string;
  /** Loads it for `seconds`; runId makes every created clientReference of the run unique. */
  drive(runId: string, seconds: number): Promise<LoadResult>;
  /** The load generator's process while it is a long-lived one (the gRPC generator), to read its CPU from /proc. */
  generatorPid?: number;
  /** Whether the database's CPU belongs to the figure (PostgreSQL scenarios). */
  usesDatabase: boolean;
  stop(): Promise<void>;
}

/** One measured phase of one scenario. */
export interface Measurement {
  result: LoadResult;
  /** The subject's utime + stime over the phase, in clock ticks. */
  cpuTicks: number;
  cpuUsPerRequest: number;
  /** The PostgreSQL backends serving the subject, over the phase. */
  dbUsPerRequest?: number;
  /** WAL bytes the cluster wrote over the phase, per request (PostgreSQL scenarios). */
  walBytesPerRequest?: number;
  /** Each statement the database ran over the phase, per request (pg_stat_statements, when loaded). */
  statements?: StatementFigure[];
  /** The load generator's own CPU, when known. */
  generatorUsPerRequest?: number;
  /**
   * The subject's CPU per request by thread name (/proc/<pid>/task/<tid>/comm,
   * threads of one name added up): the main thread (the event loop) apart
   * from the webhook worker, the garbage collector's and libuv's threads.
   */
  threadsUsPerRequest?: Record<string, number>;
  /** process.hrtime of the phase, in µs (CLOCK_MONOTONIC, as V8's profile timestamps): to cut a CPU profile to it. */
  window: { startUs: number; endUs: number };
}

export interface MeasureOptions {
  ticksPerSecond: number;
  /** Set when PostgreSQL scenarios run. */
  database?: DatabaseCpuMeter;
}

const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

/**
 * measurePhase reads the subject's CPU (and its database backends', and a
 * long-lived load generator's) from /proc right before and right after one
 * load phase and divides by the requests completed in it.
 */
export async function measurePhase(subject: Subject, runId: string, seconds: number, options: MeasureOptions): Promise<Measurement> {
  const database = subject.usesDatabase ? options.database : undefined;
  const dbBefore = database ? await database.sample(subject.pid) : undefined;
  const walBefore = database ? await database.walBytes() : undefined;
  const statementsBefore = database && !database.statements.unavailable ? await database.statements.snapshot() : undefined;
  const generatorBefore = subject.generatorPid === undefined ? undefined : cpuTicks(subject.generatorPid);
  const threadsBefore = threadTicks(subject.pid);
  const before = cpuTicks(subject.pid);
  const startUs = monotonicUs();
  const result = await subject.drive(runId, seconds);
  const endUs = monotonicUs();
  const after = cpuTicks(subject.pid);
  const threadsAfter = threadTicks(subject.pid);
  const generatorAfter = subject.generatorPid === undefined ? undefined : cpuTicks(subject.generatorPid);
  const dbAfter = database ? await database.sample(subject.pid) : undefined;
  const walAfter = database ? await database.walBytes() : undefined;
  const statementsAfter = statementsBefore ? await database!.statements.snapshot() : undefined;
  if (before === undefined || after === undefined) throw new Error(`process ${subject.pid} went away while measured:\n${subject.stderrTail()}`);

  const perRequest = (ticks: number) => (ticks / options.ticksPerSecond / Math.max(1, result.requests)) * 1e6;
  const generatorSeconds =
    result.generatorCpuSeconds ??
    (generatorBefore !== undefined && generatorAfter !== undefined ? (generatorAfter - generatorBefore) / options.ticksPerSecond : undefined);
  return {
    result,
    cpuTicks: after - before,
    cpuUsPerRequest: perRequest(after - before),
    dbUsPerRequest: dbBefore && dbAfter ? perRequest(backendTicksSpent(dbBefore, dbAfter)) : undefined,
    walBytesPerRequest: walBefore !== undefined && walAfter !== undefined ? Number(walAfter - walBefore) / Math.max(1, result.requests) : undefined,
    statements: statementsBefore && statementsAfter ? statementFigures(statementsBefore, statementsAfter, result.requests) : undefined,
    generatorUsPerRequest: generatorSeconds === undefined ? undefined : (generatorSeconds / Math.max(1, result.requests)) * 1e6,
    threadsUsPerRequest: byThreadName(threadsBefore, threadsAfter, perRequest),
    window: { startUs, endUs },
  };
}

/** byThreadName adds up each thread's ticks between two readings by its name, as µs per request; a thread that started meanwhile counts from 0. */
export function byThreadName(
  before: ReadonlyMap<number, { name: string; ticks: number }>,
  after: ReadonlyMap<number, { name: string; ticks: number }>,
  perRequest: (ticks: number) => number,
): Record<string, number> {
  const ticks = new Map<string, number>();
  for (const [tid, { name, ticks: now }] of after) ticks.set(name, (ticks.get(name) ?? 0) + now - (before.get(tid)?.ticks ?? 0));
  return Object.fromEntries([...ticks].filter(([, t]) => t > 0).sort((a, b) => b[1] - a[1]).map(([name, t]) => [name, Math.round(perRequest(t))]));
}
