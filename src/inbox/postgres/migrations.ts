/**
 * The Postgres inbox's schema, in a schema the user names (default `hookdrill`). Append-only, as on
 * SQLite: a released migration is never edited; the ledger says which ran, and a schema made by a
 * newer hookdrill is refused before anything is written. `{s}` is the quoted schema name.
 */
import type { Migration } from '../types.js';

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'deliveries',
    sql: `
      CREATE TABLE {s}.deliveries (
        source          text    NOT NULL,             -- provider name: stripe, github, ...
        delivery_id     text    NOT NULL,             -- the provider's id to dedupe on
        event_type      text,
        body            bytea,                        -- raw bytes as received
        headers         text    NOT NULL,             -- JSON object of the request headers kept
        received_at     bigint  NOT NULL,             -- unix ms
        status          text    NOT NULL CHECK (status IN ('pending', 'working', 'done', 'dead')),
        attempts        integer NOT NULL DEFAULT 0,   -- claims so far; fences outcomes
        attempt_base    integer NOT NULL DEFAULT 0,   -- requeue --reset-attempts moves this, never attempts
        next_attempt_at bigint  NOT NULL,             -- pending: due at; working: lease runs out at (database clock)
        last_error      text,
        finished_at     bigint,
        PRIMARY KEY (source, delivery_id)
      );
      -- Claims read due rows in order from here (only rows not finished: it stays small).
      CREATE INDEX deliveries_claim ON {s}.deliveries (next_attempt_at, received_at) WHERE status IN ('pending', 'working');
      -- Counts by status, dead rows by error, and --error read this.
      CREATE INDEX deliveries_status_error ON {s}.deliveries (status, last_error);
      CREATE INDEX deliveries_received ON {s}.deliveries (received_at);
      -- The audit trail of requeues: when, how many rows moved, and by which selector.
      CREATE TABLE {s}.requeue_log (
        id             bigserial PRIMARY KEY,
        at             bigint  NOT NULL,
        moved          integer NOT NULL,
        selector       text    NOT NULL,
        reset_attempts boolean NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'route',
    sql: `
      -- The route listen gave the row (listen --route, the project file's routes): kept, so a change
      -- of routes applies to new deliveries, and inspect and requeue select by it. NULL: none.
      ALTER TABLE {s}.deliveries ADD COLUMN route text;
    `,
  },
];

export const LATEST_VERSION = Math.max(...MIGRATIONS.map((m) => m.version));

export const LEDGER_SQL = `
  CREATE TABLE IF NOT EXISTS {s}.hookdrill_migrations (
    version    integer PRIMARY KEY,
    name       text    NOT NULL,
    applied_at bigint  NOT NULL
  )`;
