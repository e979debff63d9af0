import { existsSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import type {
  Overview,
  OverviewOptions,
  Page,
  RequeueOptions,
  RequeueRecord,
  Selector,
  Claimed,
  ClaimOptions,
  DeliveryKey,
  DeliveryStatus,
  FailOutcome,
  Inbox,
  InboxStats,
  NewDelivery,
  Settlement,
  StoredDelivery,
} from '../types.js';
import { toClaimed, toStored } from '../row.js';
import { perMinuteChart } from '../per-minute.js';
import type { DeliveryRow } from '../row.js';
import { CHECK_HEADER, InboxOpenError } from '../types.js';
import { describeSqliteError } from './errors.js';

export { describeSqliteError } from './errors.js';
import { APPLICATION_ID, LATEST_VERSION, LEDGER_SQL, MIGRATIONS } from './migrations.js';
import * as sql from './statements.js';
import { GroupCommit } from '../batch.js';
import type { GroupCommitOptions } from '../batch.js';

export { InboxOpenError };

export interface SqliteOpenOptions {
  /** Create the file (and the schema) when it does not exist. Default true. */
  create?: boolean;
  /** Open without writing anything: for inspect. */
  readonly?: boolean;
  /**
   * How long a write waits for another process's lock before SQLITE_BUSY (default 5 s). 0: fail
   * at once — the receiver's main-thread writes, which hand a locked batch to the writer thread.
   */
  busyTimeoutMs?: number;
  /**
   * false: commits write the WAL but do not sync it (synchronous = NORMAL), and SQLite does not
   * checkpoint on its own (wal_autocheckpoint = 0). Only for a caller that syncs the WAL file
   * itself before it acknowledges anything (the receiver's main-thread writes) and has the
   * checkpoints run elsewhere. Default true: every commit is synced (synchronous = FULL).
   */
  syncCommits?: boolean;
}

export function openSqliteInbox(path: string, options: SqliteOpenOptions = {}): SqliteInbox {
  const create = options.create ?? true;
  const readonly = options.readonly ?? false;
  const exists = existsSync(path);
  if (exists && statSync(path).isDirectory()) throw new InboxOpenError(`inbox ${path} is a directory, not a file`);
  if (!exists && (!create || readonly)) throw new InboxOpenError(`no inbox at ${path}`);
  if (!exists && existsSync(`${path}-wal`) && statSync(`${path}-wal`).size > 0) {
    // The inbox was deleted while a process had it open and that process died: its last commits
    // may be in this WAL. SQLite would drop it silently under a new, empty inbox.
    throw new InboxOpenError(
      `no inbox at ${path}, but its write-ahead log ${path}-wal is there (${statSync(`${path}-wal`).size} bytes): the inbox was deleted while in use and its last commits may be in that log; restore ${path}, or move the -wal and -shm files aside to start a new inbox`,
    );
  }

  let db: Database.Database;
  try {
    db = new Database(path, { readonly, fileMustExist: !create || readonly });
  } catch (err) {
    throw new InboxOpenError(`cannot open inbox ${path}: ${(err as Error).message}`);
  }
  try {
    const version = checkIdentity(db, path, readonly);
    // Wait for another process's write (listen, requeue) instead of failing at once.
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
    if (!readonly) {
      // Already WAL: this changes nothing and writes nothing (a full disk must not stop an open).
      if (String(db.pragma('journal_mode', { simple: true })) !== 'wal') db.pragma('journal_mode = WAL');
      // better-sqlite3 leaves WAL at NORMAL, which can lose the last commits on power loss: an
      // acknowledged delivery must survive that, so FULL, and checked rather than assumed.
      const syncs = options.syncCommits ?? true;
      db.pragma(syncs ? 'synchronous = FULL' : 'synchronous = NORMAL');
      if (!syncs) db.pragma('wal_autocheckpoint = 0');
      // After a checkpoint resets it, the WAL file is cut back to 64 MiB: a burst must not keep
      // holding its peak size on disk for ever (this setting is per connection; nothing is written).
      db.pragma('journal_size_limit = 67108864');
      const level = db.pragma('synchronous', { simple: true });
      if (level !== (syncs ? 2 : 1))
        throw new InboxOpenError(`inbox ${path}: SQLite refused synchronous=${syncs ? 'FULL' : 'NORMAL'} (got ${String(level)})`);
      // Write only when there is something to migrate: an up-to-date inbox opens without writing.
      if (version < LATEST_VERSION) migrate(db);
    }
    return new SqliteInbox(db, path);
  } catch (err) {
    db.close();
    if (err instanceof InboxOpenError) throw err;
    throw new InboxOpenError(`cannot open inbox ${path}: ${describeSqliteError(err)}`);
  }
}

/** The inbox file was deleted or replaced under a process that has it open. */
export class InboxFileGoneError extends Error {
  override readonly name = 'InboxFileGoneError';
}

/**
 * Refuse, before writing anything, a file that is not ours or was made by a newer hookdrill.
 * Returns the schema version it holds (0 for a new, empty file).
 */
function checkIdentity(db: Database.Database, path: string, readonly: boolean): number {
  let appId: number;
  let tables: string[];
  try {
    appId = db.pragma('application_id', { simple: true }) as number;
    tables = (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as { name: string }[]).map((t) => t.name);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'SQLITE_NOTADB') throw new InboxOpenError(`${path} is not a hookdrill inbox (not a SQLite database)`);
    // A WAL inbox needs its -shm file even to be read: on a read-only file system there is none.
    const hint = code === 'SQLITE_CANTOPEN' ? ' (on a read-only file system: copy the inbox somewhere writable first)' : '';
    throw new InboxOpenError(`cannot read inbox ${path}: ${(err as Error).message}${hint}`);
  }
  if (appId === 0 && tables.length === 0) {
    if (readonly) throw new InboxOpenError(`${path} is empty, not a hookdrill inbox`);
    return 0; // a new, empty file: ours to set up
  }
  if (appId !== APPLICATION_ID) {
    throw new InboxOpenError(`${path} is not a hookdrill inbox (a SQLite database of something else)`);
  }
  if (!tables.includes('hookdrill_migrations')) {
    // Ours, with tables, but no ledger: which migrations ran cannot be known, and guessing could
    // run one twice. Every command refuses the same way rather than suggest an upgrade that fails.
    throw new InboxOpenError(
      `inbox ${path} has lost its migration ledger (the hookdrill_migrations table), so its schema version is unknown; restore the file from a backup`,
    );
  }
  const row = tables.includes('hookdrill_migrations')
    ? (db.prepare('SELECT MAX(version) AS v FROM hookdrill_migrations').get() as { v: number | null })
    : { v: 0 };
  const version = row.v ?? 0;
  if (readonly && version < LATEST_VERSION) {
    throw new InboxOpenError(
      `inbox ${path} has schema version ${version}, older than this hookdrill's ${LATEST_VERSION}; run listen or requeue on it once to upgrade it`,
    );
  }
  if (version > LATEST_VERSION) {
    throw new InboxOpenError(
      `inbox ${path} has schema version ${version}, made by a newer hookdrill (this one knows up to ${LATEST_VERSION}); upgrade hookdrill`,
    );
  }
  return version;
}

function migrate(db: Database.Database): void {
  db.transaction(() => {
    db.pragma(`application_id = ${APPLICATION_ID}`);
    db.exec(LEDGER_SQL);
    const done = new Set((db.prepare('SELECT version FROM hookdrill_migrations').all() as { version: number }[]).map((r) => r.version));
    const record = db.prepare('INSERT INTO hookdrill_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    for (const m of MIGRATIONS) {
      if (done.has(m.version)) continue;
      db.exec(m.sql);
      record.run(m.version, m.name, Date.now());
    }
  }).immediate();
}

/** One write of those the writer thread gathers into a transaction (see writeAll). */
export type WriteOp =
  | { op: 'put'; rows: readonly PutRow[] }
  | { op: 'claim'; options: ClaimOptions }
  | { op: 'settle'; outcomes: readonly Settlement[]; now?: number };

/** A delivery as the PUT statement takes it: headers as their JSON text. */
export interface PutRow {
  source: string;
  deliveryId: string;
  eventType: string | null;
  body: Buffer;
  headers: string;
  receivedAt: number;
  route: string | null;
}

export function toPutRow(d: NewDelivery): PutRow {
  return {
    source: d.source,
    deliveryId: d.deliveryId,
    eventType: d.eventType ?? null,
    body: d.body,
    headers: JSON.stringify(d.headers),
    receivedAt: d.receivedAt,
    route: d.route ?? null,
  };
}

export class SqliteInbox implements Inbox {
  private readonly statements: Record<keyof typeof sql, Database.Statement>;
  /** The file opened, by device and inode: a path that no longer leads to it means it was deleted or replaced. */
  private readonly identity: { dev: number; ino: number } | undefined;
  private group: GroupCommit | undefined;

  /**
   * @internal Made by openSqliteInbox. Left out of the published types (stripInternal): its handle
   * is better-sqlite3's, whose types are a devDependency a user's compiler would not find.
   */
  constructor(
    private readonly db: Database.Database,
    readonly location: string,
  ) {
    const st = statSync(location, { throwIfNoEntry: false });
    this.identity = st ? { dev: st.dev, ino: st.ino } : undefined;
    // Prepared once. A file without the schema (an empty one opened read-only) fails here, clearly.
    const prepared = {} as Record<keyof typeof sql, Database.Statement>;
    try {
      for (const [name, text] of Object.entries(sql)) prepared[name as keyof typeof sql] = db.prepare(text);
    } catch (err) {
      throw new InboxOpenError(`inbox ${location} has no deliveries table: ${(err as Error).message}`);
    }
    this.statements = prepared;
  }

  /** Store a delivery; resolves after the transaction holding it has committed (see putMany). */
  async put(d: NewDelivery): Promise<{ inserted: boolean }> {
    if (this.group) return this.group.put(d);
    const [result] = await this.putMany([d]);
    return result as { inserted: boolean };
  }

  /**
   * Store these deliveries in one transaction: one disk sync for all of them (group commit).
   * Each result says whether its row was new; a key seen earlier in the same batch is a duplicate,
   * as it would be across batches. Throws (every row unacknowledged) when the transaction fails.
   */
  async putMany(rows: readonly NewDelivery[]): Promise<{ inserted: boolean }[]> {
    return this.putRows(rows.map(toPutRow));
  }

  /** putMany of rows already in the table's shape. */
  putRows(params: readonly PutRow[]): { inserted: boolean }[] {
    return this.writeAll([{ op: 'put', rows: params }])[0] as { inserted: boolean }[];
  }

  /**
   * Several writes — puts, claims, outcomes — in one transaction, so one disk sync for all of
   * them: the writer thread gathers whatever is queued. Results in the order of the operations.
   * A disk found full is checkpointed and the whole transaction tried once more. When it holds
   * puts, the file is checked after the commit: rows committed into a deleted inbox are lost when
   * the process exits, so the callers must not acknowledge them.
   */
  writeAll(ops: readonly WriteOp[]): unknown[] {
    const write = this.db.transaction(() =>
      ops.map((o) =>
        o.op === 'put'
          ? this.insertRows(o.rows)
          : o.op === 'claim'
            ? this.claimRows(o.options)
            : this.settleRows(o.outcomes, o.now ?? Date.now()),
      ),
    );
    let results: unknown[];
    try {
      results = write.immediate();
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_FULL' || !this.checkpointAfterFull()) throw this.storeError(err);
      // The checkpoint emptied the WAL: the space it held is free for this write.
      try {
        results = write.immediate();
      } catch (again) {
        throw this.storeError(again);
      }
    }
    if (ops.some((o) => o.op === 'put')) {
      const gone = this.fileProblem();
      if (gone) throw new InboxFileGoneError(gone);
    }
    return results;
  }

  /** A SQLite error in words, keeping its code for callers that act on it. */
  private storeError(err: unknown): Error {
    const e = new Error(`inbox ${this.location}: ${describeSqliteError(err)}`) as Error & { code?: string };
    const code = (err as { code?: string }).code;
    if (code) e.code = code;
    return e;
  }

  private insertRows(rows: readonly PutRow[]): { inserted: boolean }[] {
    return rows.map((p) => ({ inserted: this.statements.PUT.run(p).changes === 1 }));
  }

  private claimRows(o: ClaimOptions): Claimed[] {
    const now = o.now ?? Date.now();
    const params = { now, leaseUntil: now + o.leaseMs, limit: o.limit };
    const rows = (
      o.excludeRoutes && o.excludeRoutes.length > 0
        ? this.statements.CLAIM_EXCLUDING.all({ ...params, exclude: JSON.stringify(o.excludeRoutes) })
        : this.statements.CLAIM.all(params)
    ) as DeliveryRow[];
    return toClaimed(rows);
  }

  private settleRows(outcomes: readonly Settlement[], now: number): boolean[] {
    return outcomes.map((o) => {
      const k = { source: o.key.source, deliveryId: o.key.deliveryId, attempt: o.fence };
      const info =
        o.outcome === 'done'
          ? this.statements.COMPLETE.run({ ...k, now })
          : o.outcome === 'dead'
            ? this.statements.BURY.run({ ...k, error: o.error, now })
            : o.outcome === 'release'
              ? this.statements.RELEASE.run({ ...k, retryAt: now + o.retryInMs })
              : this.statements.RETRY.run({ ...k, error: o.error, retryAt: now + o.retryInMs });
      return info.changes === 1;
    });
  }

  /** Turn group commit on: puts gathered within one turn of the event loop share a transaction. */
  useGroupCommit(options: GroupCommitOptions): GroupCommit {
    this.group = new GroupCommit((rows) => this.putMany(rows), options);
    return this.group;
  }

  /** Why the inbox cannot keep what is written to it now, or undefined when it can. */
  fileProblem(): string | undefined {
    if (!this.identity) return undefined;
    const st = statSync(this.location, { throwIfNoEntry: false });
    if (st && st.dev === this.identity.dev && st.ino === this.identity.ino) return undefined;
    return `inbox ${this.location} was ${st ? 'replaced' : 'deleted'} while in use: what is written now is lost when this process exits, so nothing is acknowledged; restart to open a new inbox`;
  }

  async health(): Promise<{ ok: boolean; problem?: string }> {
    const problem = this.fileProblem();
    return problem ? { ok: false, problem } : { ok: true };
  }

  /**
   * A write found the disk full. Appending to the WAL needs new space, but a WAL that has grown
   * over the disk only shrinks through a checkpoint (its pages moved into the database, then the
   * file truncated): without one, freeing a little space is eaten by the next appends and the
   * inbox never recovers. Returns whether the checkpoint completed, so the write can be tried
   * again; while the disk is too full even for that, the write fails as it would have (503).
   */
  /** Whether the file is in WAL mode (a file system without shared memory can refuse it). */
  get inWalMode(): boolean {
    return String(this.db.pragma('journal_mode', { simple: true })) === 'wal';
  }

  /**
   * Copy what the WAL holds into the database file without holding up writers (PASSIVE), so the
   * WAL can start over: for a writer whose own connection does not checkpoint (syncCommits false).
   */
  checkpoint(): { log: number; checkpointed: number } {
    const [row] = this.db.pragma('wal_checkpoint(PASSIVE)') as { log: number; checkpointed: number }[];
    return { log: row?.log ?? 0, checkpointed: row?.checkpointed ?? 0 };
  }

  private checkpointAfterFull(): boolean {
    try {
      const [row] = this.db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
      return row !== undefined && row.busy === 0;
    } catch {
      return false;
    }
  }

  async claim(o: ClaimOptions): Promise<Claimed[]> {
    return this.claimRows(o);
  }

  async settle(outcomes: readonly Settlement[], now = Date.now()): Promise<boolean[]> {
    return this.db.transaction(() => this.settleRows(outcomes, now)).immediate();
  }

  /** One outcome on its own: mark done, if this claim (its fence) still holds the row. */
  async complete(key: DeliveryKey, fence: number, now = Date.now()): Promise<boolean> {
    return this.statements.COMPLETE.run({ source: key.source, deliveryId: key.deliveryId, attempt: fence, now }).changes === 1;
  }

  /** One outcome on its own: reschedule (at an absolute time) or bury, if this claim still holds the row. */
  async fail(key: DeliveryKey, fence: number, error: string, outcome: FailOutcome, now = Date.now()): Promise<boolean> {
    const k = { source: key.source, deliveryId: key.deliveryId, attempt: fence, error };
    const info =
      'dead' in outcome ? this.statements.BURY.run({ ...k, now }) : this.statements.RETRY.run({ ...k, retryAt: outcome.retryAt });
    return info.changes === 1;
  }

  async get(key: DeliveryKey): Promise<StoredDelivery | undefined> {
    const row = this.statements.GET.get(key) as DeliveryRow | undefined;
    return row ? toStored(row) : undefined;
  }

  async list(filter: { status?: DeliveryStatus; limit?: number } = {}): Promise<StoredDelivery[]> {
    const limit = filter.limit ?? 1000;
    const rows = (
      filter.status ? this.statements.LIST_BY_STATUS.all({ status: filter.status, limit }) : this.statements.LIST.all({ limit })
    ) as DeliveryRow[];
    return rows.map(toStored);
  }

  async stats(): Promise<InboxStats> {
    const counts: Record<DeliveryStatus, number> = { pending: 0, working: 0, done: 0, dead: 0 };
    for (const r of this.statements.COUNTS.all() as { status: DeliveryStatus; n: number }[]) counts[r.status] = r.n;
    const oldest = (this.statements.OLDEST_PENDING.get() as { at: number | null }).at;
    return {
      counts,
      total: counts.pending + counts.working + counts.done + counts.dead,
      oldestPendingAt: oldest ?? undefined,
    };
  }

  async requeue(keys: readonly DeliveryKey[], options: { resetAttempts?: boolean; now?: number } = {}): Promise<number> {
    const now = options.now ?? Date.now();
    const resetAttempts = options.resetAttempts ? 1 : 0;
    return this.db.transaction(() => {
      let moved = 0;
      for (const key of keys) moved += this.statements.REQUEUE.run({ ...key, now, resetAttempts }).changes;
      return moved;
    })();
  }

  async select(selector: Selector, page: Page): Promise<StoredDelivery[]> {
    const { clause, params } = where(selector);
    const newest = page.order === 'newest';
    // A row value against the receipt order: the index on received_at serves both directions
    // (SQLite sorts only the ties of one received_at), so a page deep in a million rows is cheap.
    const after = page.after
      ? `${clause ? ' AND' : ' WHERE'} (received_at, source, delivery_id) ${newest ? '<' : '>'} (@aR, @aS, @aD)`
      : '';
    const dir = newest ? ' DESC' : '';
    const rows = this.db
      .prepare(`SELECT * FROM deliveries ${clause}${after} ORDER BY received_at${dir}, source${dir}, delivery_id${dir} LIMIT @limit`)
      .all({
        ...params,
        limit: page.limit,
        ...(page.after ? { aR: page.after.receivedAt, aS: page.after.source, aD: page.after.deliveryId } : {}),
      }) as DeliveryRow[];
    return rows.map(toStored);
  }

  async count(selector: Selector): Promise<number> {
    const { clause, params } = where(selector);
    return (this.db.prepare(`SELECT COUNT(*) AS n FROM deliveries ${clause}`).get(params) as { n: number }).n;
  }

  async overview(now = Date.now(), options: OverviewOptions = {}): Promise<Overview> {
    const stats = await this.stats();
    const from = now - 3_600_000;
    const real = options.excludeCheck === true;
    const chart = perMinuteChart(this.statements.PER_MINUTE.all({ from, now }) as { minute: number; status: DeliveryStatus; n: number }[]);
    const attempts: Record<number, number> = {};
    for (const r of (real ? this.statements.ATTEMPTS_REAL : this.statements.ATTEMPTS).all() as { attempts: number; n: number }[])
      attempts[r.attempts] = r.n;
    const requeues = (
      this.statements.RECENT_REQUEUES.all() as { at: number; moved: number; selector: string; reset_attempts: number }[]
    ).map(
      (r): RequeueRecord => ({
        at: r.at,
        moved: r.moved,
        selector: JSON.parse(r.selector) as Selector,
        resetAttempts: r.reset_attempts === 1,
      }),
    );
    return {
      stats,
      ...chart,
      deadByError: (real ? this.statements.DEAD_BY_ERROR_REAL : this.statements.DEAD_BY_ERROR).all() as Overview['deadByError'],
      retryingByError: (real
        ? this.statements.RETRYING_BY_ERROR_REAL
        : this.statements.RETRYING_BY_ERROR
      ).all() as Overview['retryingByError'],
      attempts,
      requeues,
      ...(real ? { excludeCheck: true } : {}),
    };
  }

  async requeueWhere(selector: Selector, options: RequeueOptions): Promise<number> {
    const { clause, params } = where(selector);
    // The rows are chosen once, up front: a row a worker buries again during the requeue is not
    // picked up a second time, so a requeue always ends and moves each row at most once.
    // Pending rows only when asked for by status: "retry now" is a requeue of its own, never a side effect.
    const pending = selector.statuses?.includes('pending') === true;
    const rowids = this.db
      .prepare(
        `SELECT rowid FROM deliveries ${clause}${clause ? ' AND' : ' WHERE'} status IN ('done', 'dead'${pending ? ", 'pending'" : ''}) ORDER BY received_at`,
      )
      .pluck()
      .all(params) as number[];
    options.onChosen?.(rowids.length);
    const batchSize = options.batchSize ?? 500;
    const resetAttempts = options.resetAttempts ? 1 : 0;
    const logId = this.statements.LOG_REQUEUE.run({
      at: options.now ?? Date.now(),
      moved: 0,
      selector: JSON.stringify(selector),
      resetAttempts,
    }).lastInsertRowid;
    let moved = 0;
    for (let i = 0; i < rowids.length; i += batchSize) {
      await options.beforeBatch?.();
      const batch = JSON.stringify(rowids.slice(i, i + batchSize));
      // The batch and its count in the log commit together.
      const changes = this.db.transaction(() => {
        const n = this.statements.REQUEUE_ROWIDS.run({
          rowids: batch,
          now: options.now ?? Date.now(),
          resetAttempts,
          reroute: options.reroute ? 1 : 0,
          pending: pending ? 1 : 0,
        }).changes;
        this.statements.LOG_REQUEUE_PROGRESS.run({ id: logId, moved: moved + n });
        return n;
      })();
      moved += changes;
      options.onBatch?.(changes);
    }
    return moved;
  }

  async prune(before: number): Promise<number> {
    return this.statements.PRUNE.run({ before }).changes;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

/** A selector as a WHERE clause with named parameters (never string-pasted values). */
function where(sel: Selector): { clause: string; params: Record<string, string | number> } {
  const parts: string[] = [];
  const params: Record<string, string | number> = {};
  if (sel.source) {
    parts.push('source = @source');
    params.source = sel.source;
  }
  if (sel.route) {
    parts.push('route = @route');
    params.route = sel.route;
  }
  if (sel.ids && sel.ids.length > 0) {
    parts.push('delivery_id IN (SELECT value FROM json_each(@ids))');
    params.ids = JSON.stringify(sel.ids);
  }
  if (sel.statuses && sel.statuses.length > 0) {
    parts.push('status IN (SELECT value FROM json_each(@statuses))');
    params.statuses = JSON.stringify(sel.statuses);
  }
  if (sel.type) {
    parts.push('event_type = @type');
    params.type = sel.type;
  }
  if (sel.since !== undefined) {
    parts.push('received_at >= @since');
    params.since = sel.since;
  }
  if (sel.until !== undefined) {
    parts.push('received_at < @until');
    params.until = sel.until;
  }
  if (sel.noError) parts.push("(last_error IS NULL OR last_error = '')");
  if (sel.error) {
    parts.push('instr(last_error, @error) > 0');
    params.error = sel.error;
  }
  if (sel.check !== undefined) {
    const mark = `json_extract(headers, '$."${CHECK_HEADER}"')`;
    if (typeof sel.check === 'string') {
      parts.push(`${mark} = @checkRun`);
      params.checkRun = sel.check;
    } else parts.push(sel.check ? `${mark} IS NOT NULL` : `${mark} IS NULL`);
  }
  return { clause: parts.length ? `WHERE ${parts.join(' AND ')}` : '', params };
}
