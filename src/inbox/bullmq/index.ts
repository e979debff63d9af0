import { Redis } from 'ioredis';
import { UsageError } from '../../util/errors.js';
import { InboxOpenError, InboxUnavailableError } from '../types.js';
import { describeRedisError } from './errors.js';
import { parseRedisTarget } from './target.js';

import { BullmqInbox } from './inbox.js';
import { DEFAULT_RETENTION_MS } from './options.js';
import type { BullmqOpenOptions } from './options.js';

export { displayRedis, isRedisTarget, maskRedisPassword, parseRedisTarget } from './target.js';
export { jobIdFor } from './ids.js';
export { durabilityOf } from './durability.js';
export type { RedisDurability } from './durability.js';

export { BullmqInbox } from './inbox.js';
export { DEFAULT_RETENTION_MS } from './options.js';
export type { BullmqOpenOptions, BullmqOverview } from './options.js';

export async function openBullmqInbox(target: string, o: BullmqOpenOptions = {}): Promise<BullmqInbox> {
  const t = parseRedisTarget(target);
  const timeoutMs = o.timeoutMs ?? 10_000;
  const retentionMs = o.retentionMs ?? DEFAULT_RETENTION_MS;
  if (!(retentionMs >= 1_000)) throw new UsageError(`retention of ${retentionMs} ms: at least 1000 ms (BullMQ keeps jobs by the second)`);
  let lastError: unknown;
  const redis = new Redis({
    host: t.host,
    port: t.port,
    db: t.db,
    ...(t.username !== undefined ? { username: t.username } : {}),
    ...(t.password !== undefined ? { password: t.password } : {}),
    ...(t.tls ? { tls: {} } : {}),
    connectionName: 'hookdrill',
    lazyConnect: true,
    connectTimeout: o.connectTimeoutMs ?? 3_000,
    // Fail fast: a command while Redis is away is refused at once (not queued until it returns).
    // maxRetriesPerRequest must be null for BullMQ (its worker's connection is a copy of this one);
    // a command in flight when the connection drops is bounded by commandTimeout instead.
    enableOfflineQueue: false,
    maxRetriesPerRequest: null,
    commandTimeout: timeoutMs,
    // Reconnect for ever, at most every 2 s: the inbox recovers when Redis returns, without a reopen.
    retryStrategy: (times) => Math.min(100 * 2 ** Math.min(times, 5), 2_000),
  });
  redis.on('error', (err) => {
    lastError = err;
  });
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect();
    const cause = lastError ?? err;
    const why = describeRedisError(cause);
    if (/^Redis refused the login/.test(why)) throw new InboxOpenError(`cannot open inbox ${t.display}: ${why}`);
    throw new InboxUnavailableError(`cannot open inbox ${t.display}: Redis at ${t.server} is unreachable (${why})`);
  }
  const inbox = new BullmqInbox(redis, t, o, () => lastError);
  try {
    await inbox.prepare();
  } catch (err) {
    await inbox.close().catch(() => undefined);
    if (err instanceof InboxOpenError || err instanceof InboxUnavailableError) throw err;
    throw new InboxOpenError(`cannot open inbox ${t.display}: ${describeRedisError(err)}`);
  }
  return inbox;
}
