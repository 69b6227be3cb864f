import { fork } from "node:child_process";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import type { DrillReport } from "./support/drill-report.js";
import type { AttackerReply, AttackerRequest, AttackName } from "./support/hostile-attacker.js";
import { startHealthProber, type HealthProbe } from "./support/health-prober.js";
import { connectInspector, type InspectorClient } from "./support/inspector-client.js";
import { acceptQueue, sampleProcess, startProcessSampler } from "./support/process-sampler.js";
import { startProcessTarget } from "./support/process-target.js";

export interface HostileConnectionsOptions {
  /** Hostile connections opened for each kind of attack (the flood opens more). */
  connections: number;
  /** Times each attack is run: with 2, the second shows whether memory keeps growing. */
  rounds: number;
  /** Requests each unread HTTP/1.1 connection pipelines. */
  pipelined: number;
  /** The server's MAX_CONNECTIONS; the flood opens well past it. */
  maxConnections: number;
}

/**
 * The server's deadlines in the drill: short, so each attack ends in seconds.
 * The caps and byte bounds are the defaults but for MAX_CONNECTIONS.
 */
export const drillDeadlines = {
  HEADERS_TIMEOUT_MS: "1500",
  REQUEST_TIMEOUT_MS: "3000",
  IDLE_TIMEOUT_MS: "1500",
  WRITE_TIMEOUT_MS: "1500",
};

/** The attacks in the order the drill runs them, with what each connection does. */
const attacks: { attack: Exclude<AttackName, "flood">; name: string; does: (options: HostileConnectionsOptions) => string }[] = [
  {
    attack: "slow-header-blocks",
    name: "slow HTTP/2 header blocks",
    does: () => "the HTTP/2 preface, SETTINGS, then a HEADERS frame without END_HEADERS, and nothing more",
  },
  {
    attack: "idle-ignoring-goaway",
    name: "idle HTTP/2 sessions ignoring GOAWAY",
    does: () => "one GET /healthz over HTTP/2, then a PING every 250 ms and never a close, whatever the server sends",
  },
  {
    attack: "unread-pipelined",
    name: "unread pipelined responses",
    does: (options) => `${options.pipelined} pipelined GET /v1/openapi.json on one HTTP/1.1 connection, and never a byte read`,
  },
  {
    attack: "zero-window",
    name: "zero-window HTTP/2",
    does: () => "SETTINGS_INITIAL_WINDOW_SIZE 0 and 100 concurrent GET /v1/openapi.json over HTTP/2, answering PINGs but never opening a window",
  },
];

/** Attacker runs drills/support/hostile-attacker.ts in its own process and asks it for connections. */
interface Attacker {
  call(request: DistributiveOmit<AttackerRequest, "id">): Promise<AttackerReply>;
  stop(): void;
}

type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;

function startAttacker(): Attacker {
  const child = fork(fileURLToPath(new URL("./support/hostile-attacker.ts", import.meta.url)), [], {
    cwd: fileURLToPath(new URL("..", import.meta.url)),
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  let nextId = 1;
  const pending = new Map<number, (reply: AttackerReply) => void>();
  child.on("message", (reply: AttackerReply) => {
    pending.get(reply.id)?.(reply);
    pending.delete(reply.id);
  });
  return {
    call(request) {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, resolve);
        child.send({ ...request, id }, (error) => error && reject(error));
      });
    },
    stop: () => child.kill(),
  };
}

/** What the server holds, measured right after a full garbage collection. */
interface Held {
  rssBytes: number;
  fds: number;
  /** V8's live heap plus Buffers: what the process still refers to. */
  liveBytes: number;
}

/** The figures of one run of one attack. */
interface Round {
  opened: number;
  before: Held;
  most: { rssBytes: number; fds: number };
  after: Held;
  /** From opening the first connection until the server's descriptors were back at the baseline; undefined if never. */
  releasedMs: number | undefined;
  probes: HealthProbe[];
  /** Flood only: connections closed at once, unserved. */
  refused?: number;
}

interface Phase {
  name: string;
  does: string;
  rounds: Round[];
}

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);

function latency(probes: HealthProbe[]) {
  const sorted = probes.map((p) => p.ms).sort((a, b) => a - b);
  return { p50: sorted[Math.floor(sorted.length / 2)] ?? NaN, max: sorted.at(-1) ?? NaN, failed: probes.filter((p) => !p.ok) };
}

/** Live memory may exceed its baseline by this much after an attack (allocation noise, caches warmed). */
const liveSlack = 16 * 2 ** 20;

/**
 * runHostileConnections runs the service as a process (on PostgreSQL, with
 * the drill's short deadlines), then opens `connections` hostile connections
 * of each kind in turn, sampling the server's RSS and open descriptors every
 * 100 ms and probing /healthz on a new loopback connection every 100 ms
 * throughout. Before and after each attack it forces a full garbage
 * collection through the inspector, so "after" is what the process still
 * holds rather than garbage V8 had no reason yet to collect. An attack
 * passes when the server itself ends every hostile connection (descriptors
 * back at the baseline), live memory (V8 heap and Buffers) is back at the
 * baseline, RSS does not grow from one round to the next (the allocator
 * keeps pages it grew into, but reuses them), and no probe failed. The flood
 * passes when connections past the caps were refused at accept.
 */
export async function runHostileConnections(options: HostileConnectionsOptions): Promise<DrillReport> {
  const target = await startProcessTarget({
    env: { ...drillDeadlines, MAX_CONNECTIONS: String(options.maxConnections) },
    nodeArgs: ["--inspect=127.0.0.1:0"],
  });
  const pid = target.server.child.pid!;
  const port = Number(new URL(target.url).port);
  let inspector: InspectorClient | undefined;
  const sampler = startProcessSampler(pid, 100);
  const attacker = startAttacker();
  // Answered within 5 s: the attacks are also bursts of thousands of requests
  // on two shared cores, and a health check's timeout is seconds (Docker: 30 s).
  const prober = startHealthProber(target.url, 100, 5000);
  const phases: Phase[] = [];
  try {
    inspector = await connectInspector(() => target.server.stderr());
    const measure = async (): Promise<Held> => {
      await inspector!.collectGarbage();
      const usage = await inspector!.memoryUsage();
      const sample = sampleProcess(pid);
      return { rssBytes: sample.rssBytes, fds: sample.fds, liveBytes: usage.heapUsed + usage.arrayBuffers };
    };
    // Warm the paths the attacks use, so the baseline includes what any first request allocates.
    for (let i = 0; i < 20; i++) {
      await fetch(`${target.url}/v1/openapi.json`).then((res) => res.arrayBuffer());
      await fetch(`${target.url}/healthz`).then((res) => res.arrayBuffer());
    }

    /**
     * runRound has the attacker open the hostile connections, and waits until
     * the server has taken them in and let go of them all.
     */
    async function runRound(attack: AttackName, connections: number): Promise<Round> {
      const before = await measure();
      const started = performance.now();
      const { opened } = await attacker.call({ op: "open", attack, url: target.url, connections, pipelined: options.pipelined });
      let releasedMs: number | undefined;
      while (performance.now() - started < 20_000) {
        await delay(100);
        const last = sampler.samples.at(-1)!;
        // Released: descriptors back at the baseline, and no connection still waiting to be accepted.
        if (last.at > started + 200 && last.fds <= before.fds + 2 && acceptQueue(port) === 0) {
          releasedMs = performance.now() - started;
          break;
        }
      }
      // The server may still be working through what the attack sent (10,000
      // requests for the zero-window attack): wait until it has let go of that too.
      let after = await measure();
      for (let tries = 0; tries < 10 && after.liveBytes > before.liveBytes + liveSlack; tries++) {
        await delay(1000);
        after = await measure();
      }
      const during = sampler.between(started, performance.now());
      const refused =
        // The silent connections let in are closed by the headers timeout; those
        // closed well before it were refused at accept (however late the server got to them).
        attack === "flood" ? (await attacker.call({ op: "refused", withinMs: Number(drillDeadlines.HEADERS_TIMEOUT_MS) * 0.9 })).refused : undefined;
      await attacker.call({ op: "close" });
      return {
        opened: opened ?? 0,
        before,
        most: { rssBytes: Math.max(...during.map((s) => s.rssBytes)), fds: Math.max(...during.map((s) => s.fds)) },
        after,
        releasedMs,
        probes: prober.between(started, performance.now()),
        refused,
      };
    }

    for (const { attack, name, does } of attacks) {
      const phase: Phase = { name, does: does(options), rounds: [] };
      for (let round = 0; round < options.rounds; round++) phase.rounds.push(await runRound(attack, options.connections));
      phases.push(phase);
    }
    // The flood: eight addresses each open far more than their share, silent.
    const floodPerAddress = Math.ceil(options.maxConnections / 4) + Math.ceil(options.maxConnections / 8);
    const flood: Phase = {
      name: "connection flood",
      does: `8 addresses open ${floodPerAddress} silent connections each, in waves of 250 (${8 * floodPerAddress} in all; MAX_CONNECTIONS ${options.maxConnections}, ${Math.floor(options.maxConnections / 4)} per address)`,
      rounds: [],
    };
    for (let round = 0; round < options.rounds; round++) flood.rounds.push(await runRound("flood", 8 * floodPerAddress));
    phases.push(flood);
  } finally {
    attacker.stop();
    await prober.stop();
    sampler.stop();
    inspector?.close();
    await target.close();
  }

  const verdicts = phases.map((phase) => {
    const [first, last] = [phase.rounds[0]!, phase.rounds.at(-1)!];
    const released = phase.rounds.every((r) => r.releasedMs !== undefined && r.after.fds <= r.before.fds + 2);
    const liveBack = phase.rounds.every((r) => r.after.liveBytes <= r.before.liveBytes + liveSlack);
    const rssSteady = last.after.rssBytes <= first.after.rssBytes + Math.max(liveSlack, first.after.rssBytes * 0.1);
    const healthy = phase.rounds.every((r) => r.probes.every((p) => p.ok));
    const capped =
      phase.name !== "connection flood" ||
      phase.rounds.every((r) => (r.refused ?? 0) > 0 && r.most.fds <= r.before.fds + options.maxConnections + 8 + 4);
    return { phase, ok: released && liveBack && rssSteady && healthy && capped };
  });
  const probes = prober.probes;
  const failedProbes = probes.filter((p) => !p.ok);
  const all = latency(probes);
  const floodRefused = phases.find((p) => p.name === "connection flood")?.rounds.map((r) => r.refused ?? 0) ?? [];
  const passed = verdicts.length === 5 && verdicts.every((v) => v.ok) && failedProbes.length === 0;
  const roundsText = options.rounds === 1 ? "once" : `${options.rounds} times`;
  return {
    name: "Hostile connections",
    did: `a server process on PostgreSQL (${Object.entries(drillDeadlines)
      .map(([k, v]) => `${k}=${v}`)
      .join(", ")}, MAX_CONNECTIONS=${options.maxConnections}, every other limit at its default) gets ${options.connections} hostile connections of each kind, each attack run ${roundsText}, from 8 loopback addresses (an attacker process of its own), while /healthz is probed every 100 ms on a new connection from 127.0.0.1 (a failure: no 200 within 5 s); RSS and open descriptors are sampled every 100 ms, and live memory (V8 heap and Buffers) read after a full garbage collection forced through the inspector before and after each attack`,
    headline: `${verdicts.filter((v) => v.ok).length}/${verdicts.length} attacks ended by the server with descriptors and live memory back at the baseline; /healthz ${probes.length - failedProbes.length}/${probes.length} answered 200 (p50 ${all.p50.toFixed(1)} ms, max ${all.max.toFixed(0)} ms); flood ${floodRefused.join(" and ")} refused at accept`,
    figures: phases.flatMap((phase) =>
      phase.rounds.map((round, i) => {
        const { p50, max, failed } = latency(round.probes);
        const released = round.releasedMs === undefined ? "NOT released" : `all released by the server ${(round.releasedMs / 1000).toFixed(1)} s after opening`;
        const refused =
          round.refused === undefined ? "" : `; ${round.refused} refused at accept, ${round.opened - round.refused} let in over the round (never more than ${options.maxConnections} at once)`;
        return `${phase.name}${phase.rounds.length > 1 ? `, round ${i + 1}` : ""} (${round.opened} connections: ${phase.does}): ${released}${refused}; descriptors ${round.before.fds} → max ${round.most.fds} → ${round.after.fds}; live memory ${mib(round.before.liveBytes)} → ${mib(round.after.liveBytes)} MiB; RSS ${mib(round.before.rssBytes)} → max ${mib(round.most.rssBytes)} → ${mib(round.after.rssBytes)} MiB; /healthz ${round.probes.length - failed.length}/${round.probes.length} answered 200 (p50 ${p50.toFixed(1)} ms, max ${max.toFixed(0)} ms)${
          failed.length ? `; failures: ${failed.map((p) => p.outcome).join(", ")}` : ""
        }`;
      }),
    ),
    table: [
      "| Attack | Round | Connections | Released by the server after | Descriptors before → max → after | Live memory before → after (MiB) | RSS before → max → after (MiB) | /healthz 200 (p50 / max ms) |",
      "|---|---|---|---|---|---|---|---|",
      ...phases.flatMap((phase) =>
        phase.rounds.map((round, i) => {
          const { p50, max } = latency(round.probes);
          return `| ${phase.name} | ${i + 1} | ${round.opened}${round.refused === undefined ? "" : ` (${round.refused} refused)`} | ${
            round.releasedMs === undefined ? "never" : `${(round.releasedMs / 1000).toFixed(1)} s`
          } | ${round.before.fds} → ${round.most.fds} → ${round.after.fds} | ${mib(round.before.liveBytes)} → ${mib(round.after.liveBytes)} | ${mib(round.before.rssBytes)} → ${mib(round.most.rssBytes)} → ${mib(round.after.rssBytes)} | ${
            round.probes.filter((p) => p.ok).length
          }/${round.probes.length} (${p50.toFixed(1)} / ${max.toFixed(0)}) |`;
        }),
      ),
    ],
    passed,
  };
}
