import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';
import { connect, createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';

/** Where the Redis tests run: REDIS_URL (a server, no queue), or the machine's own Redis. */
export const REDIS_URL = (process.env.REDIS_URL ?? 'redis://127.0.0.1:6379').replace(/\/+$/, '');

let reachable: Promise<string | undefined> | undefined;

/**
 * undefined when Redis answers; otherwise why not — the reason a test is skipped. Under
 * HOOKDRILL_REQUIRE_REDIS=1 (CI) a missing Redis is a failure, never a skip: this throws.
 */
export function redisMissing(): Promise<string | undefined> {
  reachable ??= (async () => {
    const redis = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 3_000, maxRetriesPerRequest: 0, retryStrategy: () => null });
    let last: Error | undefined;
    redis.on('error', (err: Error) => {
      last = err;
    });
    try {
      await redis.connect();
      await redis.ping();
      return undefined;
    } catch (err) {
      const why = `Redis not reachable at ${REDIS_URL}: ${(last ?? (err as Error)).message}`;
      if (process.env.HOOKDRILL_REQUIRE_REDIS === '1') throw new Error(`${why} (HOOKDRILL_REQUIRE_REDIS=1: required, not skipped)`);
      return why;
    } finally {
      redis.disconnect();
    }
  })();
  return reachable;
}

/** Skips the test (with the reason) where Redis cannot be reached; fails instead under HOOKDRILL_REQUIRE_REDIS=1. */
export async function needRedis(t: TestContext): Promise<boolean> {
  const why = await redisMissing();
  if (why) t.skip(why);
  return why === undefined;
}

/**
 * A fresh queue name for one test, the inbox URL that names it, and drop(): BullMQ's obliterate,
 * then every key left under the queue's prefix (hookdrill's own keys beside the queue).
 */
export function freshQueue(): { queue: string; url: string; drop: () => Promise<void> } {
  const queue = `hd_test_${randomBytes(6).toString('hex')}`;
  return {
    queue,
    url: `${REDIS_URL}/${queue}`,
    drop: () => dropQueue(queue),
  };
}

export async function dropQueue(queue: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  try {
    const q = new Queue(queue, { connection: redis });
    try {
      await q.obliterate({ force: true });
    } finally {
      await q.close();
    }
    const left = await keysOf(redis, queue);
    if (left.length > 0) await redis.del(...left);
  } finally {
    await redis.quit();
  }
}

/** Every key under bull:<queue>: (for tests that check nothing is left, or what is). */
export async function keysOf(redis: Redis, queue: string): Promise<string[]> {
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `bull:${queue}:*`, 'COUNT', 1000);
    cursor = next;
    out.push(...keys);
  } while (cursor !== '0');
  return out;
}

/** A plain client for a test to look at Redis directly; quit it afterwards. */
export function redisClient(): Redis {
  return new Redis(REDIS_URL, { maxRetriesPerRequest: null });
}

/**
 * A loopback TCP proxy in front of the test Redis: stop() closes its port and cuts every
 * connection (Redis gone, as far as a client can tell), start() opens the same port again (Redis
 * back); blackhole(true) keeps connections open but passes nothing (a Redis that hangs).
 */
export interface RedisProxy {
  port: number;
  /** REDIS_URL through the proxy, with this path (the queue). */
  url(path: string): string;
  stop(): Promise<void>;
  start(): Promise<void>;
  blackhole(on: boolean): void;
  close(): Promise<void>;
}

export async function redisProxy(): Promise<RedisProxy> {
  const upstream = new URL(REDIS_URL);
  const sockets = new Set<Socket>();
  let holed = false;
  const server = createServer((client) => {
    const up = connect(Number(upstream.port || 6379), upstream.hostname);
    sockets.add(client);
    sockets.add(up);
    const end = () => {
      client.destroy();
      up.destroy();
      sockets.delete(client);
      sockets.delete(up);
    };
    client.on('data', (c: Buffer) => {
      if (!holed) up.write(c);
    });
    up.on('data', (c: Buffer) => {
      if (!holed) client.write(c);
    });
    client.on('error', end).on('close', end);
    up.on('error', end).on('close', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const stop = async () => {
    const closed = new Promise<void>((r) => server.close(() => r()));
    for (const s of sockets) s.destroy();
    sockets.clear();
    await closed;
  };
  return {
    port,
    url: (path) => `redis://127.0.0.1:${port}/${path}`,
    stop,
    start: () => new Promise<void>((r) => server.listen(port, '127.0.0.1', r)),
    blackhole: (on) => {
      holed = on;
    },
    close: () => (server.listening ? stop() : Promise.resolve()),
  };
}

/**
 * A Redis of the test's own (redis-server on a free port, no persistence): one the test can
 * restart empty, or fill to its maxmemory, without touching the machine's Redis other suites use.
 */
export async function ownRedis(args: string[] = []): Promise<{ url: string; restart(): Promise<void>; stop(): Promise<void> }> {
  const { spawn } = await import('node:child_process');
  const { freePort } = await import('./ports.js');
  const port = await freePort();
  let child: import('node:child_process').ChildProcess | undefined;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args], {
      stdio: 'ignore',
    });
    const deadline = Date.now() + 10_000;
    for (;;) {
      const r = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      r.on('error', () => undefined);
      try {
        await r.connect();
        await r.ping();
        return;
      } catch {
        if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not start`);
        await new Promise((res) => setTimeout(res, 50));
      } finally {
        r.disconnect();
      }
    }
  };
  const stop = async () => {
    const c = child;
    // Gone already — exited, or killed by a signal (exitCode is null then): its exit will not come again.
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    await new Promise<void>((res) => {
      c.once('exit', () => res());
      c.kill('SIGKILL');
    });
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    // As a Redis without AOF comes back after a crash: on the same port, with nothing in it.
    restart: async () => {
      await stop();
      await start();
    },
    stop,
  };
}
