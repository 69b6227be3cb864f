import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { commandEnv, repoRoot } from "../support/packed-install.js";
import { accepts, freePort } from "../support/ports.js";

describe("signals reach the server through npm", { timeout: 60_000 }, () => {
  it("npm start: a SIGTERM to npm's own PID (what `kill %1` sends) stops the server and frees the port within the shutdown grace", async () => {
    const port = await freePort();
    const graceMs = 2000;
    // detached: its own process group, so only npm itself gets the signal, as from a shell's kill <pid>.
    const npm = spawn("npm", ["start"], {
      cwd: repoRoot,
      env: commandEnv({ PORT: String(port), SHUTDOWN_GRACE_MS: String(graceMs), LOG_LEVEL: "warn" }),
      stdio: "ignore",
      detached: true,
    });
    try {
      for (let i = 0; i < 300 && !(await accepts(port)); i++) await delay(100);
      assert.ok(await accepts(port), "npm start never listened");
      process.kill(npm.pid!, "SIGTERM");
      const killedAt = performance.now();
      while ((await accepts(port)) && performance.now() - killedAt < graceMs + 3000) await delay(50);
      assert.equal(await accepts(port), false, "the server still holds the port after npm was killed");
    } finally {
      // Whatever is left of the group (nothing, when the test passes).
      try {
        process.kill(-npm.pid!, "SIGKILL");
      } catch {}
    }
  });
});
