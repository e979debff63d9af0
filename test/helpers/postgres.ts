import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** Where the Postgres tests run: DATABASE_URL, or the machine's own server (trust auth, database `test`). */
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

let reachable: Promise<string | undefined> | undefined;

/**
 * undefined when Postgres answers; otherwise why not — the reason a test is skipped. Under
 * HOOKDRILL_REQUIRE_PG=1 (CI) a missing Postgres is a failure, never a skip: this throws.
 */
export function postgresMissing(): Promise<string | undefined> {
  reachable ??= (async () => {
    const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 3_000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return undefined;
    } catch (err) {
      const why = `Postgres not reachable at ${DATABASE_URL}: ${(err as Error).message}`;
      if (process.env.HOOKDRILL_REQUIRE_PG === '1') throw new Error(`${why} (HOOKDRILL_REQUIRE_PG=1: required, not skipped)`);
      return why;
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return reachable;
}

/** A fresh schema name for one test, and the inbox URL that names it; drop() removes it. */
export function freshSchema(): { schema: string; url: string; drop: () => Promise<void> } {
  const schema = `hd_test_${randomBytes(6).toString('hex')}`;
  const url = new URL(DATABASE_URL);
  url.searchParams.set('schema', schema);
  return {
    schema,
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client(DATABASE_URL);
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}
