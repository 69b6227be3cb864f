import type {
  ClaimedDelivery,
  ClaimRequest,
  CompletionResult,
  DeliveryCompletion,
  DeliveryQueue,
  DisabledReason,
} from "../delivery-queue.js";
import type { SecretBox } from "../../lib/secret-box.js";
import type { Database } from "./database.js";
import type { StatementStep, StepResult } from "./statement-pipeline.js";
import { epochMs, parseEpochMs, parseNullableEpochMs, textArrayParam, timestampParam } from "./sql-values.js";
import { attemptJson, openSecrets } from "./webhook-rows.js";

/**
 * The endpoints with pending deliveries, one row each, read by skipping
 * through webhook_deliveries_endpoint_pending_idx (a loose index scan: one
 * probe per endpoint) rather than reading every pending delivery: a claim
 * then costs the endpoints with something pending, not the backlog (a
 * GROUP BY over the due deliveries made every claim read all of them, so
 * draining n cost n², issue 21 §2).
 */
const pendingEndpointsCte = `
  recursive pending_endpoints (merchant_id, endpoint_id) as (
    (select d.merchant_id, d.endpoint_id from webhook_deliveries d where d.status = 'pending'
     order by d.merchant_id, d.endpoint_id limit 1)
    union all
    select nx.merchant_id, nx.endpoint_id from pending_endpoints p cross join lateral (
      select d.merchant_id, d.endpoint_id from webhook_deliveries d
      where d.status = 'pending' and (d.merchant_id, d.endpoint_id) > (p.merchant_id, p.endpoint_id)
      order by d.merchant_id, d.endpoint_id limit 1
    ) nx
  )`;

/**
 * A due, idle delivery of an endpoint disabled or deleted (enqueued as the
 * endpoint was being disabled) ends as failed, without an attempt. Rows
 * someone else holds are left for a later claim, so a claim never waits.
 */
const endStrandedText = `
  with ${pendingEndpointsCte}, stranded as (
    select d.merchant_id, d.id from pending_endpoints p
    join webhook_endpoints w on w.merchant_id = p.merchant_id and w.id = p.endpoint_id
    join webhook_deliveries d on d.merchant_id = p.merchant_id and d.endpoint_id = p.endpoint_id
    where d.status = 'pending' and d.next_attempt_at <= $1 and (d.lease_expires_at is null or d.lease_expires_at <= now())
      and (w.status <> 'enabled' or w.deleted_at is not null)
    for update of d skip locked
  )
  update webhook_deliveries d set status = 'failed', next_attempt_at = null, updated_at = $1,
    lease_owner = null, lease_token = null, lease_expires_at = null
  from stranded s where d.merchant_id = s.merchant_id and d.id = s.id`;

/**
 * The endpoints this claim counts slots for: enabled ones with due, idle
 * deliveries and (as this snapshot sees it) a free slot (one in all while the
 * endpoint is failing), round-robin over merchants (each merchant's earliest
 * due endpoint, then each one's second, …) so one merchant's many endpoints
 * never crowd another's out of the list, locked so that no other claim
 * counts the same endpoint's slots at once.
 *
 * The locks are waited for, not skipped: with SKIP LOCKED a claim that meets
 * every due endpoint locked by another claim would take nothing, and its
 * free slots would idle until the next poll although the other claim leaves
 * deliveries for it (the contract's concurrent claims take them all). The
 * wait lasts one claim's two round trips, and every claim locks in
 * (merchant_id, id) order, so claims never deadlock one another.
 * FOR NO KEY UPDATE rather than FOR UPDATE: it excludes other claims,
 * completions and deletions just as well, but not the KEY SHARE lock that
 * inserting a delivery (its foreign key) takes, so recording an event never
 * waits for the delivery engine.
 */
const candidatesText = `
  with ${pendingEndpointsCte}
  select w.merchant_id, w.id from webhook_endpoints w
  where w.status = 'enabled' and w.deleted_at is null
    and (w.merchant_id, w.id) in (
      select ranked.merchant_id, ranked.endpoint_id from (
        select due.merchant_id, due.endpoint_id, due.first_due,
          row_number() over (partition by due.merchant_id order by due.first_due, due.endpoint_id) as turn
        from (
          select p.merchant_id, p.endpoint_id, f.first_due
          from pending_endpoints p cross join lateral (
            select d.next_attempt_at as first_due from webhook_deliveries d
            where d.merchant_id = p.merchant_id and d.endpoint_id = p.endpoint_id and d.status = 'pending'
              and d.next_attempt_at <= $1 and (d.lease_expires_at is null or d.lease_expires_at <= now())
            order by d.next_attempt_at limit 1
          ) f
        ) due
        join webhook_endpoints e on e.merchant_id = due.merchant_id and e.id = due.endpoint_id
        where (select count(*) from webhook_deliveries l
               where l.merchant_id = due.merchant_id and l.endpoint_id = due.endpoint_id
                 and l.lease_token is not null and l.status = 'pending' and l.lease_expires_at > now())
              < case when e.failing_since is null then $2::int8 else 1 end
      ) ranked
      order by ranked.turn, ranked.first_due, ranked.endpoint_id
      limit $3)
  order by w.merchant_id, w.id
  for no key update of w`;

/**
 * The claim, in a statement that starts after the endpoints were locked, so
 * its snapshot holds every lease taken on them before: per endpoint, its
 * unexpired leases are counted and at most perEndpointLimit (1 while it is
 * failing) minus that many of its due deliveries taken, oldest due first;
 * per merchant, at most perMerchantLimit minus the leases this owner holds
 * for it; then round-robin over merchants (each one's oldest, then each
 * one's second, …), up to limit, leased on the database's clock.
 */
const claimText = `
  with picked as (
    select d.merchant_id, d.id, d.next_attempt_at, d.created_at
    from unnest($1::text[], $2::text[]) as c (merchant_id, endpoint_id)
    join webhook_endpoints e on e.merchant_id = c.merchant_id and e.id = c.endpoint_id
    cross join lateral (
      select count(*) as n from webhook_deliveries l
      where l.merchant_id = c.merchant_id and l.endpoint_id = c.endpoint_id and l.lease_token is not null
        and l.status = 'pending' and l.lease_expires_at > now()
    ) leased
    cross join lateral (
      select d.merchant_id, d.id, d.next_attempt_at, d.created_at from webhook_deliveries d
      where d.merchant_id = c.merchant_id and d.endpoint_id = c.endpoint_id and d.status = 'pending'
        and d.next_attempt_at <= $3 and (d.lease_expires_at is null or d.lease_expires_at <= now())
      order by d.next_attempt_at, d.created_at, d.id
      limit greatest(case when e.failing_since is null then $4::int8 else 1 end - leased.n, 0)
    ) d
  ), owned as (
    select l.merchant_id, count(*) as n from webhook_deliveries l
    where l.merchant_id = any($1::text[]) and l.lease_token is not null and l.status = 'pending' and l.lease_owner = $6
      and l.lease_expires_at > now()
    group by l.merchant_id
  ), ranked as (
    select p.merchant_id, p.id, p.next_attempt_at, p.created_at, coalesce(o.n, 0) as owned,
      row_number() over (partition by p.merchant_id order by p.next_attempt_at, p.created_at, p.id) as turn
    from picked p left join owned o on o.merchant_id = p.merchant_id
  ), chosen as (
    select r.merchant_id, r.id, r.turn from ranked r
    where r.turn <= $8::int8 - r.owned
    order by r.turn, r.next_attempt_at, r.created_at, r.id
    limit $5
  ), locked as (
    select d.merchant_id, d.id from webhook_deliveries d
    join chosen p on p.merchant_id = d.merchant_id and p.id = d.id
    for update of d skip locked
  ), claimed as (
    update webhook_deliveries d
    set lease_owner = $6, lease_token = gen_random_uuid()::text, lease_expires_at = now() + $7::int8 * interval '1 millisecond'
    from locked where d.merchant_id = locked.merchant_id and d.id = locked.id
    returning d.*
  )
  select c.id, c.event_id, ev.type, ev.body, jsonb_array_length(c.attempts), ${epochMs("c.created_at")},
    w.id, w.url, w.secrets, c.lease_token
  from claimed c
  join chosen p on p.merchant_id = c.merchant_id and p.id = c.id
  join events ev on ev.merchant_id = c.merchant_id and ev.id = c.event_id
  join webhook_endpoints w on w.merchant_id = c.merchant_id and w.id = c.endpoint_id
  order by p.turn, c.next_attempt_at, c.created_at, c.id`;

/**
 * The claim in one round trip (issue 21 §2): candidatesText locks the
 * endpoints and leaves their keys in two transaction-local settings, which
 * the claim, the next statement of the same transaction (so its snapshot
 * starts after the locks were granted, as the split requires), reads in
 * place of parameters. set_config(…, true) lasts until the transaction ends
 * and works through PgBouncer in transaction pooling, as the deadline's does.
 */
const lockCandidatesText = `
  with locked as (${candidatesText})
  select set_config('payments.claim_merchants', coalesce(array_agg(l.merchant_id order by l.merchant_id, l.id), '{}')::text, true),
    set_config('payments.claim_endpoints', coalesce(array_agg(l.id order by l.merchant_id, l.id), '{}')::text, true)
  from locked l`;
const claimLockedText = claimText
  .replaceAll("$1::text[]", "current_setting('payments.claim_merchants', true)::text[]")
  .replaceAll("$2::text[]", "current_setting('payments.claim_endpoints', true)::text[]")
  .replace(/\$(\d)/g, (_, n: string) => `$${Number(n) - 2}`);

/** Completion, first round trip: the endpoint, then the delivery if the lease is still ours (locked in that order everywhere). */
const lockEndpointText = `
  select w.status, w.deleted_at is not null, ${epochMs("w.failing_since")} from webhook_endpoints w
  where (w.merchant_id, w.id) = (select d.merchant_id, d.endpoint_id from webhook_deliveries d where d.id = $1)
  for no key update`;
const lockDeliveryText = `
  select d.merchant_id, d.endpoint_id from webhook_deliveries d
  where d.id = $1 and d.status = 'pending' and d.lease_token = $2
  for update`;
const updateEndpointText = `
  update webhook_endpoints set failing_since = $3, status = $4, disabled_reason = $5,
    updated_at = case when status = $4 then updated_at else $6 end
  where merchant_id = $1 and id = $2`;
/**
 * The common completion in one statement, without locking the endpoint: a
 * success on an endpoint that is not failing changes nothing but the
 * delivery (fenced by its lease token). Every completion locking the
 * endpoint row made one endpoint's completions and claims take turns, which
 * capped one endpoint's deliveries at a few hundred a second. Reading
 * failing_since unlocked is safe: a failure that commits after this snapshot
 * is ordered after this success, and sets failing_since itself. When the
 * endpoint is failing (first column false) nothing is written and the locked
 * completion runs.
 */
const quietSuccessText = `
  with e as (
    select w.failing_since is null as quiet from webhook_endpoints w
    where (w.merchant_id, w.id) = (select d.merchant_id, d.endpoint_id from webhook_deliveries d where d.id = $1)
  ), done as (
    update webhook_deliveries d set attempts = attempts || $3::jsonb, status = 'succeeded', next_attempt_at = null, updated_at = $4,
      lease_owner = null, lease_token = null, lease_expires_at = null
    where d.id = $1 and d.lease_token = $2 and d.status = 'pending' and (select quiet from e)
    returning 1
  )
  select coalesce((select quiet from e), false), (select count(*) from done)`;
/**
 * settle()'s successes, a batch in one statement: quietSuccessText for each
 * (delivery id, lease token, attempt, time), in the order given. Per row: its
 * place, whether its endpoint is quiet (not failing; true for a delivery not
 * found, which is not ours), and whether it was written. A row whose endpoint
 * is failing is left for the locked completion.
 */
const quietSuccessesText = `
  with c as (
    select * from unnest($1::text[], $2::text[], $3::text[], $4::text[]) with ordinality as c (id, token, attempt, at, n)
  ), q as (
    select c.n, w.failing_since is null as quiet from c
    join webhook_deliveries d on d.id = c.id
    join webhook_endpoints w on w.merchant_id = d.merchant_id and w.id = d.endpoint_id
  ), done as (
    update webhook_deliveries d set attempts = d.attempts || c.attempt::jsonb, status = 'succeeded', next_attempt_at = null,
      updated_at = c.at::timestamptz, lease_owner = null, lease_token = null, lease_expires_at = null
    from c join q on q.n = c.n
    where d.id = c.id and d.lease_token = c.token and d.status = 'pending' and q.quiet
    returning c.n
  )
  select c.n, coalesce(q.quiet, true), exists (select 1 from done where done.n = c.n)
  from c left join q on q.n = c.n order by c.n`;
/** The failing state alone, for an endpoint already disabled. */
const keepStatusText = `update webhook_endpoints set failing_since = $3 where merchant_id = $1 and id = $2`;
const updateDeliveryText = `
  update webhook_deliveries set attempts = attempts || $3::jsonb, status = $4, next_attempt_at = $5, updated_at = $6,
    lease_owner = null, lease_token = null, lease_expires_at = null
  where merchant_id = $1 and id = $2`;
/** A timed-out or refusing endpoint's other idle deliveries wait for its next retry (EndpointEffect.pauseUntil). */
const pauseOthersText = `
  update webhook_deliveries set next_attempt_at = $3
  where merchant_id = $1 and endpoint_id = $2 and status = 'pending' and id <> $4 and next_attempt_at < $3
    and (lease_expires_at is null or lease_expires_at <= now())`;
const failOthersText = `
  update webhook_deliveries set status = 'failed', next_attempt_at = null, updated_at = $3
  where merchant_id = $1 and endpoint_id = $2 and status = 'pending' and id <> $4
    and (lease_expires_at is null or lease_expires_at <= now())`;

const releaseText = `
  update webhook_deliveries d set lease_owner = null, lease_token = null, lease_expires_at = null
  from unnest($1::text[], $2::text[]) as l (id, token)
  where d.id = l.id and d.lease_token = l.token and d.status = 'pending'`;

const statsText = `
  select count(*), count(*) filter (where next_attempt_at <= $1), ${epochMs("min(created_at)")}
  from webhook_deliveries where status = 'pending'`;

/** The claim's statements, for the plan test (test/postgres/explain-webhooks.test.ts). */
export const claimStatements = { endStrandedText, candidatesText, claimText, lockCandidatesText, claimLockedText } as const;

export interface PostgresDeliveryQueueOptions {
  /** Opens the endpoints' sealed signing secrets for the deliveries claimed. */
  secretBox: SecretBox;
}

/**
 * createPostgresDeliveryQueue is the DeliveryQueue on PostgreSQL, as the
 * port's JSDoc (store/delivery-queue.ts) describes it, but for one
 * point: claims lock the candidate endpoints before counting their leases
 * waiting for them rather than skipping them (see candidatesText), leases run
 * on the database's now(), completions are fenced by the lease token and
 * lock the endpoint before the delivery, as claims and deletions do, except a
 * success on an endpoint that is not failing (quietSuccessText).
 */
export function createPostgresDeliveryQueue(db: Database, options: PostgresDeliveryQueueOptions): DeliveryQueue {
  const box = options.secretBox;

  /**
   * A claim in one round trip (lockCandidatesText, claimLockedText), led by
   * before's steps in the same transaction; their results too.
   */
  async function claimAfter(request: ClaimRequest, before: readonly StatementStep[]): Promise<{ before: StepResult[]; claimed: ClaimedDelivery[] }> {
    const now = timestampParam(request.now);
    const results = await db.transaction((tx) =>
      tx.commit([
        ...before,
        { text: endStrandedText, values: [now] },
        { text: lockCandidatesText, values: [now, String(request.perEndpointLimit), String(request.limit)] },
        {
          text: claimLockedText,
          values: [
            now,
            String(request.perEndpointLimit),
            String(request.limit),
            request.owner,
            String(request.leaseMs),
            String(request.perMerchantLimit ?? request.limit),
          ],
        },
      ]),
    );
    const first = results.slice(0, before.length);
    const rows = results[before.length + 2]!.rows;
    const claimed = rows.map((row) => ({
      deliveryId: row[0]!,
      eventId: row[1]!,
      eventType: row[2]!,
      body: row[3]!,
      attemptsMade: Number(row[4]),
      createdAt: parseEpochMs(row[5]!),
      endpoint: { id: row[6]!, url: row[7]!, secrets: openSecrets(box, row[6]!, row[8]!) },
      lease: { deliveryId: row[0]!, token: row[9]! },
    }));
    return { before: first, claimed };
  }

  const queue: DeliveryQueue = {
    async claim(request): Promise<ClaimedDelivery[]> {
      return (await claimAfter(request, [])).claimed;
    },

    /**
     * A turn of the engine in as few round trips as it allows. When every
     * answer is a success, they go as one statement in the claim
     * transaction's first round trip, ahead of the claim, which therefore
     * counts the leases they released (with the claim in a transaction of its
     * own it raced them and found the endpoint still full). A batch with a
     * failure, a retry or a 410 (rare while endpoints answer) completes each
     * on its own, in order, as complete() does, then claims.
     */
    async settle({ completions, claim }) {
      const results: CompletionResult[] = new Array(completions.length);
      if (!completions.every((c) => c.endpoint.kind === "succeeded" && c.next.status === "succeeded")) {
        for (let i = 0; i < completions.length; i++) results[i] = await queue.complete(completions[i]!);
        return { results, claimed: claim ? await queue.claim(claim) : [] };
      }
      const quiet = completions.map((_, i) => i);
      const batch = completions;
      const quietStep: StatementStep[] =
        batch.length === 0
          ? []
          : [
              {
                text: quietSuccessesText,
                values: [
                  textArrayParam(batch.map((c) => c.lease.deliveryId)),
                  textArrayParam(batch.map((c) => c.lease.token)),
                  textArrayParam(batch.map((c) => attemptJson(c.attempt))),
                  textArrayParam(batch.map((c) => timestampParam(c.attempt.at))),
                ],
              },
            ];
      let claimed: ClaimedDelivery[] = [];
      let quietRows: (string | null)[][] = [];
      if (claim) {
        const answer = await claimAfter(claim, quietStep);
        claimed = answer.claimed;
        quietRows = answer.before[0]?.rows ?? [];
      } else if (quietStep.length > 0) quietRows = (await db.run(true, quietStep))[0]!.rows;
      const failing: number[] = [];
      quietRows.forEach((row, j) => {
        const i = quiet[j]!;
        if (row[1] !== "t") failing.push(i);
        else results[i] = row[2] === "t" ? { recorded: true, status: "succeeded", endpointDisabled: null, otherDeliveriesFailed: 0 } : { recorded: false };
      });
      // A success on a failing endpoint clears its failing state: the locked completion.
      for (const i of failing) results[i] = await queue.complete(completions[i]!);
      return { results, claimed };
    },

    async complete({ lease, attempt, next, endpoint: effect }: DeliveryCompletion): Promise<CompletionResult> {
      if (effect.kind === "succeeded" && next.status === "succeeded") {
        const [result] = await db.run(true, [
          { text: quietSuccessText, values: [lease.deliveryId, lease.token, attemptJson(attempt), timestampParam(attempt.at)] },
        ]);
        const [quiet, written] = result!.rows[0]!;
        if (quiet === "t") return written === "1" ? { recorded: true, status: "succeeded", endpointDisabled: null, otherDeliveriesFailed: 0 } : { recorded: false };
      }
      return db.transaction(async (tx) => {
        const [endpointRows, deliveryRows] = await tx.run([
          { text: lockEndpointText, values: [lease.deliveryId] },
          { text: lockDeliveryText, values: [lease.deliveryId, lease.token] },
        ]);
        const delivery = deliveryRows!.rows[0];
        const endpoint = endpointRows!.rows[0];
        if (!delivery || !endpoint) return { recorded: false };
        const [merchantId, endpointId] = [delivery[0]!, delivery[1]!];

        // The endpoint effect, on the endpoint as it is now (locked).
        const wasEnabled = endpoint[0] === "enabled";
        const deleted = endpoint[1] === "t";
        let failingSince = parseNullableEpochMs(endpoint[2] ?? null);
        let disabled: DisabledReason | null = null;
        if (effect.kind === "succeeded") failingSince = null;
        else if (effect.kind === "gone") disabled = "gone";
        else {
          failingSince ??= new Date(effect.at);
          if (failingSince.getTime() <= effect.disableIfFailingSince.getTime()) disabled = "failing";
        }
        if (!wasEnabled) disabled = null;
        const enabled = wasEnabled && disabled === null && !deleted;
        const status = next.status === "pending" ? (enabled ? "pending" : "failed") : next.status;
        const at = timestampParam(attempt.at);

        const failing = failingSince === null ? null : timestampParam(failingSince);
        const steps = [
          // An endpoint disabled before keeps its status and reason: only its failing state changes.
          wasEnabled
            ? {
                text: updateEndpointText,
                values: [merchantId, endpointId, failing, disabled === null ? "enabled" : "disabled", disabled, at],
              }
            : { text: keepStatusText, values: [merchantId, endpointId, failing] },
          {
            text: updateDeliveryText,
            values: [
              merchantId,
              lease.deliveryId,
              attemptJson(attempt),
              status,
              status === "pending" && next.status === "pending" ? timestampParam(next.nextAttemptAt) : null,
              at,
            ],
          },
          ...(disabled !== null ? [{ text: failOthersText, values: [merchantId, endpointId, at, lease.deliveryId] }] : []),
          ...(disabled === null && enabled && effect.kind === "failed" && effect.pauseUntil
            ? [{ text: pauseOthersText, values: [merchantId, endpointId, timestampParam(effect.pauseUntil), lease.deliveryId] }]
            : []),
        ];
        const results = await tx.commit(steps);
        return { recorded: true, status, endpointDisabled: disabled, otherDeliveriesFailed: disabled !== null ? results[2]!.rowCount : 0 };
      });
    },

    async release(leases) {
      if (leases.length === 0) return;
      await db.run(true, [
        { text: releaseText, values: [textArrayParam(leases.map((l) => l.deliveryId)), textArrayParam(leases.map((l) => l.token))] },
      ]);
    },

    async stats(now) {
      const [result] = await db.run(false, [{ text: statsText, values: [timestampParam(now)] }]);
      const row = result!.rows[0]!;
      return { pending: Number(row[0]), due: Number(row[1]), oldestPendingCreatedAt: parseNullableEpochMs(row[2] ?? null) };
    },
  };
  return queue;
}
