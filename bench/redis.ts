import { Queue } from 'bullmq';
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A bench queue gone for good: BullMQ's obliterate, then hookdrill's own keys beside it (obliterate leaves those). */
export async function removeQueue(name: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  try {
    const queue = new Queue(name, { connection: redis });
    await queue.obliterate({ force: true });
    await queue.close();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `bull:${name}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
