import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Code, ConnectError, createClient, type CallOptions, type Client } from "@connectrpc/connect";
import { EventService, type Event } from "../../gen/payments/v2/events_pb.js";
import type { ApiKeyVerifier } from "../../src/auth/api-key-verifier.js";
import type { EventRecord } from "../../src/domain/event.js";
import { createEventMaker, type EventMaker } from "../support/event-maker.js";
import { createTestDatabase, queryDatabase, type TestDatabase } from "../support/postgres.js";
import { startTestServer, testStoreKind, type TestServer } from "../support/test-server.js";
import { rpcProtocols } from "./support/rpc-helpers.js";
import { take } from "./support/take-stream.js";


/** nextOutcome: the stream's next message, its end, or its error, within timeoutMs. */
async function nextOutcome(stream: AsyncIterator<Event>, timeoutMs: number): Promise<"event" | "end" | ConnectError | "timeout"> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const next = await Promise.race([
      stream.next(),
      new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), timeoutMs);
      }),
    ]);
    if (next === "timeout") return next;
    return next.done ? "end" : "event";
  } catch (error) {
    assert.ok(error instanceof ConnectError, String(error));
    return error;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Issue 21, §3: an open StreamEvents stream re-checks its key (every 10 s by
 * default, 100 ms here) and ends with Unauthenticated once the key is
 * revoked, on every protocol. On PostgreSQL the key is revoked in the
 * database, behind the server's back (as the keys CLI in another process
 * does), so the server's key cache still holds it; in memory, at the
 * verifier the server reads keys from.
 */
for (const protocol of rpcProtocols) {
  describe(`StreamEvents over ${protocol.name}: a revoked key (${testStoreKind} store)`, () => {
    let server: TestServer;
    let events: Client<typeof EventService>;
    let database: TestDatabase | undefined;
    const revokedInMemory = new Set<string>();
    let maker: EventMaker;
    const record = (merchant: string): Promise<EventRecord> => maker.created(merchant);
    const as = (merchant: string, signal: AbortSignal): CallOptions => ({ headers: { authorization: server.bearer(merchant) }, signal });

    async function revoke(merchant: string) {
      if (database) await queryDatabase(database.url, "update api_keys set revoked_at = now() where merchant_id = $1", [merchant]);
      else revokedInMemory.add(server.keys[merchant]!);
    }

    before(async () => {
      if (testStoreKind === "postgres") database = await createTestDatabase();
      const revocable = (inner: ApiKeyVerifier): ApiKeyVerifier => ({
        knows: (key) => !revokedInMemory.has(key) && (inner.knows?.(key) ?? false),
        verify: async (key) => (revokedInMemory.has(key) ? undefined : inner.verify(key)),
        ...(inner.recheck && { recheck: (key: string) => inner.recheck!(key) }),
      });
      server = await startTestServer({
        databaseUrl: database?.url,
        wrapVerifier: database ? undefined : revocable,
        caps: { streamPollIntervalMs: 50, keyRecheckMs: 100 },
      });
      maker = createEventMaker(server);
      events = createClient(EventService, protocol.transport(server.url, []));
    });
    after(async () => {
      await server.close();
      await database?.drop();
    });

    it("ends the revoked key's open stream with Unauthenticated, and leaves other keys' streams open", async () => {
      const aborter = new AbortController();
      // Streams resume after a marker: a client opens its stream only when first read.
      const [markA, markB] = [await record("merchantA"), await record("merchantB")];
      const mine = events.streamEvents({ afterEventId: markA.id }, as("merchantA", aborter.signal))[Symbol.asyncIterator]();
      const theirs = events.streamEvents({ afterEventId: markB.id }, as("merchantB", aborter.signal))[Symbol.asyncIterator]();
      const first = await record("merchantA");
      assert.deepEqual((await take(mine, 1)).map((e) => e.id), [first.id]);
      await revoke("merchantA");
      // Unrevoked, the stream would stay open past this wait (nothing else ends it).
      const outcome = await nextOutcome(mine, 5000);
      assert.ok(outcome instanceof ConnectError, `the stream went on: ${String(outcome)}`);
      assert.deepEqual([outcome.code, outcome.rawMessage], [Code.Unauthenticated, "API key is not valid"]);
      const other = await record("merchantB");
      assert.deepEqual((await take(theirs, 1)).map((e) => e.id), [other.id], "another key's stream goes on");
      aborter.abort();
    });
  });
}
