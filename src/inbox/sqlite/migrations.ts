/**
 * Append-only: a migration, once released, is never edited; a change is a new one. The ledger
 * table records which ran, so a file made by a newer hookdrill is recognised and left alone.
 */
import type { Migration } from '../types.js';

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'deliveries',
    sql: `
      CREATE TABLE deliveries (
        source          TEXT    NOT NULL,             -- provider name: stripe, github, ...
        delivery_id     TEXT    NOT NULL,             -- the provider's id to dedupe on
        event_type      TEXT,
        body            BLOB,                         -- raw bytes as received; NULL once pruned
        headers         TEXT    NOT NULL,             -- JSON object of the request headers kept
        received_at     INTEGER NOT NULL,             -- unix ms
        status          TEXT    NOT NULL CHECK (status IN ('pending', 'working', 'done', 'dead')),
        attempts        INTEGER NOT NULL DEFAULT 0,   -- claims so far; fences complete/fail
        next_attempt_at INTEGER NOT NULL,             -- pending: due at; working: lease runs out at
        last_error      TEXT,
        finished_at     INTEGER,
        PRIMARY KEY (source, delivery_id)
      );
      -- Due claims read (status, next_attempt_at); status counts read the same index.
      CREATE INDEX deliveries_due ON deliveries (status, next_attempt_at);
      CREATE INDEX deliveries_received ON deliveries (received_at);
    `,
  },
  {
    version: 2,
    name: 'requeue_log',
    sql: `
      -- The audit trail of requeues: when, how many rows moved, and by which selector.
      CREATE TABLE requeue_log (
        id       INTEGER PRIMARY KEY,
        at       INTEGER NOT NULL,   -- unix ms
        moved    INTEGER NOT NULL,
        selector TEXT    NOT NULL,   -- JSON of the selector used
        reset_attempts INTEGER NOT NULL
      );
      -- Dead rows grouped by error, and --error filters, read this.
      CREATE INDEX deliveries_status_error ON deliveries (status, last_error);
    `,
  },
  {
    version: 3,
    name: 'attempt_base',
    sql: `
      -- attempts only ever grows: it fences complete/fail, and a fence must never be reused.
      -- requeue --reset-attempts moves the base instead; attempts since the reset = attempts - attempt_base.
      ALTER TABLE deliveries ADD COLUMN attempt_base INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 4,
    name: 'claim_index',
    sql: `
      -- Claims read the due rows in order from here. With only (status, next_attempt_at), the two
      -- statuses are two ranges and every claim sorted the whole due backlog: a 60,000-row backlog
      -- after an outage cost ~10 ms per claim. Partial: it holds only rows not yet finished.
      CREATE INDEX deliveries_claim ON deliveries (next_attempt_at, received_at) WHERE status IN ('pending', 'working');
    `,
  },
  {
    version: 5,
    name: 'drop_due_index',
    sql: `
      -- Since claim_index, nothing needs (status, next_attempt_at): counts and status filters are
      -- served as well by (status, last_error), which leads with status too (as on Postgres). Every
      -- put, claim and outcome paid for keeping it.
      DROP INDEX deliveries_due;
    `,
  },
  {
    version: 6,
    name: 'route',
    sql: `
      -- The route listen gave the row (listen --route, the project file's routes): kept, so a change
      -- of routes applies to new deliveries, and inspect and requeue select by it. NULL: none.
      ALTER TABLE deliveries ADD COLUMN route TEXT;
    `,
  },
];

export const LATEST_VERSION = MIGRATIONS.reduce((v, m) => Math.max(v, m.version), 0);

export const LEDGER_SQL = `
  CREATE TABLE IF NOT EXISTS hookdrill_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    applied_at INTEGER NOT NULL
  )`;

/** Marks the file as a hookdrill inbox (PRAGMA application_id): 'hkdr'. */
export const APPLICATION_ID = 0x686b6472;
