import { createInterface } from "node:readline";
import { spawnBenchChild, type BenchChild, type BenchChildOptions } from "./bench-process.js";

/**
 * A bench process that does its work on command: the plain-pg baselines and
 * the gRPC load generator. It stays up across the rounds of a run, so each
 * round measures a warm process, and the bench reads its CPU from /proc
 * right before and after each command.
 */
export interface CommandChild extends BenchChild {
  /** Sends one command (a JSON line on stdin) and resolves with its answer (a JSON line on stdout). */
  request<T>(command: Record<string, unknown>): Promise<T>;
}

/** startCommandChild spawns a script that calls serveCommands and resolves once it is ready. */
export async function startCommandChild(options: Omit<BenchChildOptions, "pipeStdio">): Promise<CommandChild> {
  const child = spawnBenchChild({ ...options, pipeStdio: true });
  const lines = createInterface({ input: child.child.stdout! });
  const waiting: { resolve(line: string): void; reject(error: Error): void }[] = [];
  lines.on("line", (line) => waiting.shift()?.resolve(line));
  child.child.once("exit", (code, signal) => {
    for (const w of waiting.splice(0)) {
      w.reject(new Error(`${options.script} exited (${signal ?? code}); stderr:\n${child.stderrTail()}`));
    }
  });
  const next = () =>
    new Promise<string>((resolve, reject) => {
      if (child.exited()) reject(new Error(`${options.script} has exited; stderr:\n${child.stderrTail()}`));
      else waiting.push({ resolve, reject });
    });
  const ready = JSON.parse(await next()) as { ready?: boolean };
  if (!ready.ready) throw new Error(`${options.script} did not say it was ready`);
  return {
    ...child,
    async request<T>(command: Record<string, unknown>): Promise<T> {
      const answer = next();
      child.child.stdin!.write(`${JSON.stringify(command)}\n`);
      const parsed = JSON.parse(await answer) as { ok?: T; error?: string };
      if (parsed.error !== undefined) throw new Error(`${options.script}: ${parsed.error}`);
      return parsed.ok as T;
    },
  };
}

/**
 * serveCommands is the child's side: "ready" once prepare() resolves, then
 * one answer per command line, in order; exits when stdin closes.
 */
export async function serveCommands<C>(
  prepare: () => Promise<void>,
  handle: (command: C) => Promise<unknown>,
  close: () => Promise<void>,
): Promise<void> {
  await prepare();
  process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
  for await (const line of createInterface({ input: process.stdin })) {
    if (line.trim() === "") continue;
    try {
      const ok = await handle(JSON.parse(line) as C);
      process.stdout.write(`${JSON.stringify({ ok })}\n`);
    } catch (error) {
      process.stdout.write(`${JSON.stringify({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) })}\n`);
    }
  }
  await close();
  process.exit(0);
}
