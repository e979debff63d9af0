import pg from 'pg';
import { GroupCommit } from '../batch.js';
import type { GroupCommitOptions } from '../batch.js';
import { CHECK_HEADER, InboxOpenError, InboxUnavailableError } from '../types.js';
import { toClaimed, toStored } from '../row.js';
import { perMinuteChart } from '../per-minute.js';
import { WriteWatch } from '../write-watch.js';
import type { DeliveryRow } from '../row.js';
import type {
  Claimed,
  ClaimOptions,
  DeliveryKey,
  DeliveryStatus,
  Inbox,
  InboxStats,
  NewDelivery,
  Overview,
  OverviewOptions,
  Page,
  RequeueOptions,
  RequeueRecord,
  Selector,
  Settlement,
  StoredDelivery,
} from '../types.js';
import { LATEST_VERSION, LEDGER_SQL, MIGRATIONS } from './migrations.js';
import { maskPassword, parseTarget } from './target.js';
import type { PostgresTarget } from './target.js';

export { isPostgresTarget, maskPassword, parseTarget } from './target.js';

/** The database's clock in unix ms: leases and retries are timed by it, so skewed hosts agree. */
const NOW = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

/** bigint (int8) columns as numbers: every one here is unix ms or a count, far below 2^53. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

export interface PostgresOpenOptions {
  create?: boolean;
  /** Every transaction read-only (inspect): the database itself refuses a write. */
  readonly?: boolean;
  schema?: string;
  groupCommit?: GroupCommitOptions;
  /** A put unfinished for this long makes health() say the store is stuck. */
  stuckAfterMs?: number;
  /** Connections at most (default 8). */
  poolSize?: number;
}

const READ_ONLY_SETTINGS = ['-c default_transaction_read_only=on', '-c max_parallel_workers_per_gather=0', '-c statement_timeout=30s'];

export async function openPostgresInbox(target: string, o: PostgresOpenOptions = {}): Promise<PostgresInbox> {
  const t = parseTarget(target, o.schema);
  const pool = new pg.Pool({
    connectionString: t.connectionString,
    max: o.poolSize ?? 8,
    connectionTimeoutMillis: 5_000,
    // A connection that dies silently (a host gone, a cable pulled) is noticed, not waited on for ever.
    keepAlive: true,
    query_timeout: 30_000,
    types,
    // Ours after the URL's own: a commit is flushed to disk before it returns (a server, database
    // or role set to synchronous_commit=off would let a 200 go out for a delivery that is not
    // durable); inspect's connections refuse every write, and look without taking the database's
    // cores from the receiver that writes to it: no parallel workers (a count of a million rows
    // took three processes, both cores of a small machine, and acks fell to a seventh), and the
    // server itself stops a read at query_timeout, not only the client.
    options: [t.options, '-c synchronous_commit=on', ...(o.readonly ? READ_ONLY_SETTINGS : [])].filter(Boolean).join(' '),
  });
  // A connection the server drops while idle (a restart, pg_terminate_backend) is reported here;
  // the pool replaces it on the next query, so it is not an error of any request.
  pool.on('error', () => undefined);
  try {
    await prepareSchema(pool, t, o);
  } catch (err) {
    await pool.end().catch(() => undefined);
    if (err instanceof InboxOpenError) throw err;
    throw new InboxOpenError(`cannot open inbox ${t.display}: ${describePgError(err)}`);
  }
  return new PostgresInbox(pool, t, o);
}

async function prepareSchema(pool: pg.Pool, t: PostgresTarget, o: PostgresOpenOptions): Promise<void> {
  const s = quoteIdent(t.schema);
  const found = await pool.query<{ ledger: string | null; deliveries: string | null }>(
    'SELECT to_regclass($1) AS ledger, to_regclass($2) AS deliveries',
    [`${s}.hookdrill_migrations`, `${s}.deliveries`],
  );
  const state = found.rows[0];
  let version = 0;
  if (state?.ledger) {
    version = (await pool.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${s}.hookdrill_migrations`)).rows[0]?.v ?? 0;
  } else if (state?.deliveries) {
    throw new InboxOpenError(
      `schema ${t.schema} at ${t.display} has a deliveries table but no hookdrill migration ledger: not a hookdrill inbox (name another with ?schema=)`,
    );
  }
  if (version > LATEST_VERSION) {
    throw new InboxOpenError(
      `inbox ${t.display} has schema version ${version}, made by a newer hookdrill (this one knows up to ${LATEST_VERSION}); upgrade hookdrill`,
    );
  }
  if (version === LATEST_VERSION) return;
  if (version === 0 && (o.readonly || o.create === false))
    throw new InboxOpenError(`no hookdrill inbox in schema ${t.schema} at ${t.display}`);
  if (o.readonly) {
    throw new InboxOpenError(
      `inbox ${t.display} has schema version ${version}, older than this hookdrill's ${LATEST_VERSION}; run listen or requeue on it once to upgrade it`,
    );
  }
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    // Two receivers starting at once: one migrates, the other waits and finds it done.
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`hookdrill:${t.schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await client.query(LEDGER_SQL.replaceAll('{s}', () => s));
    const done = new Set(
      (await client.query<{ version: number }>(`SELECT version FROM ${s}.hookdrill_migrations`)).rows.map((r) => r.version),
    );
    for (const m of MIGRATIONS) {
      if (done.has(m.version)) continue;
      await client.query(m.sql.replaceAll('{s}', () => s));
      await client.query(`INSERT INTO ${s}.hookdrill_migrations (version, name, applied_at) VALUES ($1, $2, ${NOW})`, [m.version, m.name]);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Postgres errors in words, the password never among them. */
export function describePgError(err: unknown): string {
  const e = err as { code?: string; message?: string };
  const code = e.code ?? '';
  if (code === 'ECONNREFUSED') return 'Postgres refused the connection (is it running, on that host and port?)';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'the Postgres host name does not resolve';
  if (code === '28P01' || code === '28000') return `Postgres refused the login: ${maskPassword(e.message ?? '')}`;
  if (code === '3D000') return maskPassword(e.message ?? 'no such database');
  if (code === '25006') return 'Postgres refused the write: the database is read-only (default_transaction_read_only, or a standby)';
  if (code === '57P01' || code === '57P02' || code === '57P03') return 'Postgres is shutting down or restarting';
  if (/timeout/i.test(e.message ?? '')) return `Postgres did not answer in time (${maskPassword(e.message ?? '')})`;
  return maskPassword(e.message ?? String(err));
}

/**
 * The inbox on Postgres: many receivers and workers on one database. Puts are idempotent
 * (`ON CONFLICT DO NOTHING`) and group-committed (one INSERT of many rows); claims take due rows
 * with `FOR UPDATE SKIP LOCKED` and a lease timed by the database clock; outcomes are fenced on
 * the claim count, many in one statement.
 */
export class PostgresInbox implements Inbox {
  readonly location: string;
  private readonly t: string;
  private readonly group: GroupCommit | undefined;
  /** Puts in flight: health() says "stuck" when the oldest has waited past stuckAfterMs. */
  private readonly watch = new WriteWatch();
  private closed = false;

  constructor(
    private readonly pool: pg.Pool,
    target: PostgresTarget,
    private readonly o: PostgresOpenOptions,
  ) {
    this.location = target.display;
    this.t = `${quoteIdent(target.schema)}.deliveries`;
    // Several batches in flight, each on its own connection: Postgres syncs concurrent commits together.
    this.group = o.groupCommit ? new GroupCommit((rows) => this.putMany(rows), { maxInFlight: 4, ...o.groupCommit }) : undefined;
  }

  put(d: NewDelivery): Promise<{ inserted: boolean }> {
    if (this.group) return this.group.put(d);
    return this.putMany([d]).then((r) => r[0] as { inserted: boolean });
  }

  /**
   * One INSERT of all the rows — one transaction, one commit. A key twice in the batch: the first
   * is stored, the rest are duplicates, as across batches.
   */
  async putMany(rows: readonly NewDelivery[]): Promise<{ inserted: boolean }[]> {
    const done = this.watch.begin();
    let failure: unknown;
    try {
      // The fields as one JSON text and the bodies as one binary parameter (cut apart by their
      // lengths): pg escaping each element of six arrays, and sending the bodies as hex, cost
      // listen more than the insert did.
      // Headers go as their own JSON text (as stored), so nothing in them is unescaped on the way.
      const text = (t: string) => noNul(wellFormed(t));
      const keys = rows.map((r) => [text(r.source), text(r.deliveryId)] as const);
      const fields = JSON.stringify(
        rows.map((r, i) => [
          ...(keys[i] as readonly [string, string]),
          r.eventType === undefined ? null : text(r.eventType),
          JSON.stringify(r.headers),
          Math.round(r.receivedAt),
          r.body.length,
          r.route === undefined ? null : text(r.route),
        ]),
      );
      const inserted = await this.query<{ source: string; delivery_id: string }>(
        `INSERT INTO ${this.t} (source, delivery_id, event_type, body, headers, received_at, status, attempts, next_attempt_at, route)
         SELECT source, delivery_id, event_type, substring($2::bytea FROM start FOR len), headers, received_at, 'pending', 0,
                LEAST(received_at, ${NOW}), route
           FROM (SELECT e->>0 AS source, e->>1 AS delivery_id, e->>2 AS event_type, e->>3 AS headers, e->>6 AS route,
                        (e->>4)::bigint AS received_at, (e->>5)::int AS len, ord,
                        1 + COALESCE(sum((e->>5)::int) OVER (ORDER BY ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)::int AS start
                   FROM json_array_elements($1::json) WITH ORDINALITY AS x(e, ord)) r
          -- Rows locked in key order: two batches in flight that share keys cannot deadlock.
          -- ord last: of two copies of a key in one batch, the first is stored.
          ORDER BY source, delivery_id, ord
         ON CONFLICT (source, delivery_id) DO NOTHING
         RETURNING source, delivery_id`,
        [fields, Buffer.concat(rows.map((r) => r.body))],
        'hookdrill_put',
      );
      // A key stored by this statement counts as inserted for its first row in the batch only.
      const fresh = new Set(inserted.map((r) => `${r.source}\u0000${r.delivery_id}`));
      return keys.map(([source, deliveryId]) => ({ inserted: fresh.delete(`${source}\u0000${deliveryId}`) }));
    } catch (err) {
      failure = err;
      throw err;
    } finally {
      done(failure);
    }
  }

  async claim(o: ClaimOptions): Promise<Claimed[]> {
    const rows = await this.query<DeliveryRow>(
      `WITH now AS (SELECT COALESCE($3::bigint, ${NOW}) AS ms)
       UPDATE ${this.t} d
          SET status = 'working', attempts = d.attempts + 1, next_attempt_at = (SELECT ms FROM now) + $2
        WHERE (d.source, d.delivery_id) IN (
                SELECT source, delivery_id FROM ${this.t}
                 WHERE status IN ('pending', 'working') AND next_attempt_at <= (SELECT ms FROM now)
                   -- The worker's paused routes are skipped; a row with no recorded route is claimed
                   -- (the worker works its route out and releases it).
                   AND (route IS NULL OR NOT (route = ANY($4::text[])))
                 ORDER BY next_attempt_at, received_at
                 LIMIT $1
                   FOR UPDATE SKIP LOCKED)
       RETURNING d.*`,
      [o.limit, Math.round(o.leaseMs), o.now === undefined ? null : Math.round(o.now), (o.excludeRoutes ?? []).map(noNul)],
      'hookdrill_claim',
    );
    return toClaimed(rows);
  }

  async settle(all: readonly Settlement[], now?: number): Promise<boolean[]> {
    if (all.length === 0) return [];
    // One outcome per claim: a second for the same key and fence would match the row twice in one
    // UPDATE, where which one wins is undefined. The first stands (as on SQLite); the rest are refused.
    const seen = new Set<string>();
    const first = all.map((x) => {
      const k = `${x.key.source}\u0000${x.key.deliveryId}\u0000${x.fence}`;
      const isFirst = !seen.has(k);
      seen.add(k);
      return isFirst;
    });
    const outcomes = all.filter((_, i) => first[i]);
    const kept = await this.query<{ ord: number }>(
      `WITH now AS (SELECT COALESCE($8::bigint, ${NOW}) AS ms)
       UPDATE ${this.t} d
          SET status = CASE WHEN o.kind IN ('retry', 'release') THEN 'pending' ELSE o.kind END,
              finished_at = CASE WHEN o.kind IN ('retry', 'release') THEN d.finished_at ELSE (SELECT ms FROM now) END,
              -- A release puts the row back untried: its error kept, its attempt not spent (the
              -- fence, attempts, keeps its new value; attempt_base moves with it).
              last_error = CASE WHEN o.kind = 'release' THEN d.last_error ELSE o.error END,
              attempt_base = CASE WHEN o.kind = 'release' THEN d.attempt_base + 1 ELSE d.attempt_base END,
              next_attempt_at = CASE WHEN o.kind IN ('retry', 'release') THEN (SELECT ms FROM now) + o.delay ELSE d.next_attempt_at END
         FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::bigint[], $7::int[])
              AS o(source, delivery_id, fence, kind, error, delay, ord)
        WHERE d.source = o.source AND d.delivery_id = o.delivery_id AND d.status = 'working' AND d.attempts = o.fence
       RETURNING o.ord`,
      [
        outcomes.map((x) => noNul(x.key.source)),
        outcomes.map((x) => noNul(x.key.deliveryId)),
        outcomes.map((x) => x.fence),
        outcomes.map((x) => x.outcome),
        // An error is often the app's own words (a response body): a NUL in it would fail the batch.
        outcomes.map((x) => (x.outcome === 'done' || x.outcome === 'release' ? null : noNul(x.error))),
        outcomes.map((x) => (x.outcome === 'retry' || x.outcome === 'release' ? Math.round(x.retryInMs) : 0)),
        outcomes.map((_, i) => i),
        now === undefined ? null : Math.round(now),
      ],
      'hookdrill_settle',
    );
    const held = new Set(kept.map((r) => r.ord));
    let j = 0;
    return all.map((_, i) => (first[i] ? held.has(j++) : false));
  }

  async get(key: DeliveryKey): Promise<StoredDelivery | undefined> {
    const [row] = await this.query<DeliveryRow>(`SELECT * FROM ${this.t} WHERE source = $1 AND delivery_id = $2`, [
      noNul(key.source),
      noNul(key.deliveryId),
    ]);
    return row ? toStored(row) : undefined;
  }

  async stats(): Promise<InboxStats> {
    const counts: Record<DeliveryStatus, number> = { pending: 0, working: 0, done: 0, dead: 0 };
    const [byStatus, oldest] = await Promise.all([
      this.query<{ status: DeliveryStatus; n: number }>(`SELECT status, count(*) AS n FROM ${this.t} GROUP BY status`),
      this.query<{ at: number | null }>(`SELECT min(received_at) AS at FROM ${this.t} WHERE status = 'pending'`),
    ]);
    for (const r of byStatus) counts[r.status] = r.n;
    return {
      counts,
      total: counts.pending + counts.working + counts.done + counts.dead,
      oldestPendingAt: oldest[0]?.at ?? undefined,
    };
  }

  async select(selector: Selector, page: Page): Promise<StoredDelivery[]> {
    const { clause, params } = where(selector);
    const newest = page.order === 'newest';
    const dir = newest ? ' DESC' : '';
    let after = '';
    if (page.after) {
      params.push(page.after.receivedAt, page.after.source, page.after.deliveryId);
      const n = params.length;
      // A row comparison in the order's own terms, so the index on received_at serves every page.
      after = `${clause ? ' AND' : ' WHERE'} (received_at, source, delivery_id) ${newest ? '<' : '>'} ($${n - 2}, $${n - 1}, $${n})`;
    }
    const rows = await this.query<DeliveryRow>(
      `SELECT * FROM ${this.t} ${clause}${after} ORDER BY received_at${dir}, source${dir}, delivery_id${dir} LIMIT $${params.length + 1}`,
      [...params, page.limit],
    );
    return rows.map(toStored);
  }

  async count(selector: Selector): Promise<number> {
    const { clause, params } = where(selector);
    const [row] = await this.query<{ n: number }>(`SELECT count(*) AS n FROM ${this.t} ${clause}`, params);
    return row?.n ?? 0;
  }

  async overview(now = Date.now(), options: OverviewOptions = {}): Promise<Overview> {
    const from = now - 3_600_000;
    const log = this.t.replace(/deliveries$/, 'requeue_log');
    const real = options.excludeCheck === true;
    const mark = `(headers::jsonb ->> '${CHECK_HEADER}')`;
    const only = real ? `AND ${mark} IS NULL` : '';
    const checkRows = `count(*) FILTER (WHERE ${mark} IS NOT NULL)::int AS "checkRows"`;
    const [stats, minutes, dead, retrying, attempts, requeues] = await Promise.all([
      this.stats(),
      this.query<{ minute: number; status: DeliveryStatus; n: number }>(
        `SELECT ((received_at - $1) / 60000)::int AS minute, status, count(*)::int AS n FROM ${this.t}
          WHERE received_at >= $1 AND received_at < $2 GROUP BY 1, 2`,
        [from, now],
      ),
      this.query<Overview['deadByError'][number]>(
        `SELECT COALESCE(last_error, '') AS error, count(*)::int AS count, min(delivery_id) AS "exampleId", max(finished_at) AS "newestAt",
                min(finished_at) AS "oldestAt", ${checkRows}
           FROM ${this.t} WHERE status = 'dead' ${only} GROUP BY last_error ORDER BY count DESC, error LIMIT 20`,
      ),
      this.query<Overview['retryingByError'][number]>(
        `SELECT last_error AS error, count(*)::int AS count, min(delivery_id) AS "exampleId", min(next_attempt_at) AS "nextAt", ${checkRows}
           FROM ${this.t} WHERE status = 'pending' AND last_error IS NOT NULL ${only} GROUP BY last_error ORDER BY count DESC, error LIMIT 20`,
      ),
      this.query<{ attempts: number; n: number }>(
        `SELECT attempts - attempt_base AS attempts, count(*) AS n FROM ${this.t}
          WHERE status IN ('pending', 'working', 'dead') ${only} GROUP BY 1`,
      ),
      this.query<{ at: number; moved: number; selector: string; reset_attempts: boolean }>(
        `SELECT at, moved, selector, reset_attempts FROM ${log} ORDER BY id DESC LIMIT 5`,
      ),
    ]);
    const byAttempts: Record<number, number> = {};
    for (const r of attempts) byAttempts[r.attempts] = r.n;
    return {
      stats,
      ...perMinuteChart(minutes),
      deadByError: dead,
      retryingByError: retrying,
      attempts: byAttempts,
      ...(real ? { excludeCheck: true } : {}),
      requeues: requeues.map(
        (r): RequeueRecord => ({
          at: r.at,
          moved: r.moved,
          selector: JSON.parse(r.selector) as Selector,
          resetAttempts: r.reset_attempts,
        }),
      ),
    };
  }

  async requeueWhere(selector: Selector, options: RequeueOptions): Promise<number> {
    const { clause, params } = where(selector);
    const log = this.t.replace(/deliveries$/, 'requeue_log');
    // Chosen once, up front: a row a worker buries again during the requeue is not picked twice.
    // Pending rows only when asked for by status: "retry now" is a requeue of its own, never a side effect.
    const pending = selector.statuses?.includes('pending') === true;
    const keys = await this.query<{ source: string; delivery_id: string }>(
      `SELECT source, delivery_id FROM ${this.t} ${clause}${clause ? ' AND' : ' WHERE'} status IN ('done', 'dead'${pending ? ", 'pending'" : ''}) ORDER BY received_at`,
      params,
    );
    options.onChosen?.(keys.length);
    const batchSize = options.batchSize ?? 500;
    const reset = options.resetAttempts === true;
    const [entry] = await this.query<{ id: number }>(
      `INSERT INTO ${log} (at, moved, selector, reset_attempts) VALUES (COALESCE($1::bigint, ${NOW}), 0, $2, $3) RETURNING id`,
      [options.now ?? null, JSON.stringify(selector), reset],
    );
    let moved = 0;
    for (let i = 0; i < keys.length; i += batchSize) {
      await options.beforeBatch?.();
      const batch = keys.slice(i, i + batchSize);
      // The batch and its count in the log commit together; a row claimed since it was chosen stays.
      const n = await this.transaction(async (c) => {
        const r = await c.query(
          `UPDATE ${this.t} d
              SET status = 'pending', finished_at = NULL,
                  next_attempt_at = CASE WHEN d.status = 'pending' THEN LEAST(d.next_attempt_at, COALESCE($3::bigint, ${NOW}))
                                         ELSE COALESCE($3::bigint, ${NOW}) END,
                  attempt_base = CASE WHEN $4 THEN d.attempts ELSE d.attempt_base END,
                  route = CASE WHEN $6 THEN NULL ELSE d.route END
             FROM unnest($1::text[], $2::text[]) AS k(source, delivery_id)
            WHERE d.source = k.source AND d.delivery_id = k.delivery_id
              AND (d.status IN ('done', 'dead') OR ($5 AND d.status = 'pending'))`,
          [batch.map((k) => k.source), batch.map((k) => k.delivery_id), options.now ?? null, reset, pending, options.reroute === true],
        );
        await c.query(`UPDATE ${log} SET moved = $1 WHERE id = $2`, [moved + (r.rowCount ?? 0), entry?.id]);
        return r.rowCount ?? 0;
      });
      moved += n;
      options.onBatch?.(n);
    }
    return moved;
  }

  /** Healthy: the database answers, and no put has waited longer than stuckAfterMs. */
  async health(): Promise<{ ok: boolean; problem?: string }> {
    const problem = this.watch.problem(
      this.location,
      this.o.stuckAfterMs ?? 1_000,
      'a lock held by another transaction, or the database slow',
    );
    if (problem) return { ok: false, problem };
    try {
      // Bounded: /healthz must answer even when the database does not. Not only "does it answer":
      // a read-only database (a standby, default_transaction_read_only) answers every read and
      // refuses every delivery.
      const probe = this.query<{ standby: boolean; ro: string }>(
        "SELECT pg_is_in_recovery() AS standby, current_setting('transaction_read_only') AS ro",
      );
      probe.catch(() => undefined);
      const [row] = (await Promise.race([
        probe,
        new Promise((_, reject) => setTimeout(() => reject(new Error('Postgres did not answer within 1 s')), 1_000).unref()),
      ])) as { standby: boolean; ro: string }[];
      if (row?.standby)
        return { ok: false, problem: 'Postgres is a standby (in recovery): it refuses every write, so no delivery can be stored' };
      if (row?.ro === 'on')
        return { ok: false, problem: 'Postgres is read-only (default_transaction_read_only): no delivery can be stored' };
      return { ok: true };
    } catch (err) {
      return { ok: false, problem: (err as Error).message };
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Puts still gathering are owed their answers — but not for ever (each is bounded by query_timeout).
    const giveUpAt = Date.now() + 35_000;
    while ((this.group?.pending ?? 0) > 0 && Date.now() < giveUpAt) await new Promise((r) => setTimeout(r, 5));
    this.closed = true;
    await this.pool.end();
  }

  /** With a name, the statement is parsed and planned once per connection (the hot paths: put, claim, settle). */
  private async query<R extends pg.QueryResultRow>(text: string, params: unknown[] = [], name?: string): Promise<R[]> {
    try {
      return (await this.pool.query<R>(name ? { name, text, values: params } : { text, values: params })).rows;
    } catch (err) {
      throw this.unavailable(err);
    }
  }

  private async transaction<T>(work: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw this.unavailable(err);
    }
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw this.unavailable(err);
    } finally {
      client.release();
    }
  }

  private unavailable(err: unknown): Error {
    if (err instanceof InboxUnavailableError) return err;
    const e = new InboxUnavailableError(`inbox ${this.location}: ${describePgError(err)}`) as InboxUnavailableError & { code?: string };
    const code = (err as { code?: string }).code;
    if (code) e.code = code;
    return e;
  }
}

/** Postgres text cannot hold NUL: it is written as the six characters \u0000 instead of failing the whole batch. */
/**
 * Text as UTF-8 can carry it: a lone surrogate (a body's JSON may spell one) becomes U+FFFD, as pg
 * makes it of any text — and Postgres's JSON parser does not refuse the batch holding it.
 */
function wellFormed(text: string): string {
  return /[\ud800-\udfff]/.test(text) ? Buffer.from(text, 'utf8').toString('utf8') : text;
}

function noNul(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\\u0000') : text;
}

/** A selector as a WHERE clause with positional parameters (never pasted values). */
function where(sel: Selector): { clause: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  const p = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  if (sel.source) parts.push(`source = ${p(sel.source)}`);
  if (sel.route) parts.push(`route = ${p(sel.route)}`);
  if (sel.ids && sel.ids.length > 0) parts.push(`delivery_id = ANY(${p(sel.ids)}::text[])`);
  if (sel.statuses && sel.statuses.length > 0) parts.push(`status = ANY(${p(sel.statuses)}::text[])`);
  if (sel.type) parts.push(`event_type = ${p(sel.type)}`);
  if (sel.since !== undefined) parts.push(`received_at >= ${p(sel.since)}`);
  if (sel.until !== undefined) parts.push(`received_at < ${p(sel.until)}`);
  if (sel.error) parts.push(`strpos(last_error, ${p(sel.error)}) > 0`);
  if (sel.noError) parts.push("(last_error IS NULL OR last_error = '')");
  if (sel.check !== undefined) {
    const mark = `(headers::jsonb ->> '${CHECK_HEADER}')`;
    if (typeof sel.check === 'string') parts.push(`${mark} = ${p(sel.check)}`);
    else parts.push(sel.check ? `${mark} IS NOT NULL` : `${mark} IS NULL`);
  }
  return { clause: parts.length ? `WHERE ${parts.join(' AND ')}` : '', params };
}
