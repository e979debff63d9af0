import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { freshSchema, postgresMissing } from './postgres.js';
import { freshQueue, redisMissing } from './redis.js';
import { tempDir } from './tmp.js';

/** Every inbox backend a test runs on: a fresh SQLite file, Postgres schema or BullMQ queue each time. */
export const BACKENDS: {
  name: string;
  missing: () => Promise<string | undefined>;
  target: () => { url: string; drop: () => Promise<void> };
}[] = [
  { name: 'SQLite', missing: async () => undefined, target: () => ({ url: join(tempDir(), 'inbox.db'), drop: async () => undefined }) },
  { name: 'Postgres', missing: postgresMissing, target: freshSchema },
  { name: 'BullMQ', missing: redisMissing, target: freshQueue },
];

/** Debian's chromium, which the browser tests drive with playwright-core. */
export const CHROMIUM = '/usr/bin/chromium';

/** undefined when chromium is installed; otherwise why the test is skipped (a failure under HOOKDRILL_REQUIRE_TOOLS=1). */
export function chromiumMissing(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined;
  const why = 'no chromium (apt install chromium)';
  if (process.env.HOOKDRILL_REQUIRE_TOOLS === '1') throw new Error(`${why} (HOOKDRILL_REQUIRE_TOOLS=1: required, not skipped)`);
  return why;
}
