import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import net from "node:net";
import { describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { commandEnv, repoRoot } from "../support/packed-install.js";

/** A port free a moment ago. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Whether something accepts connections on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

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
      for (let i = 0; i < 300 && !(await listening(port)); i++) await delay(100);
      assert.ok(await listening(port), "npm start never listened");
      process.kill(npm.pid!, "SIGTERM");
      const killedAt = performance.now();
      while ((await listening(port)) && performance.now() - killedAt < graceMs + 3000) await delay(50);
      assert.equal(await listening(port), false, "the server still holds the port after npm was killed");
    } finally {
      // Whatever is left of the group (nothing, when the test passes).
      try {
        process.kill(-npm.pid!, "SIGKILL");
      } catch {}
    }
  });
});
