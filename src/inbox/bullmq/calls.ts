import type { Redis } from 'ioredis';
import { UsageError } from '../../util/errors.js';
import { InboxUnavailableError } from '../types.js';
import { describeRedisError, isConnectionError } from './errors.js';

/** Every call the BullMQ inbox makes to Redis: refused at once while it is away, bounded in time, its errors in words. */
export class RedisCalls {
  constructor(
    private readonly redis: Redis,
    private readonly o: { location: string; server: string; timeoutMs: number; lastError: () => unknown; closed: () => boolean },
  ) {}

  /**
   * Every call: refused at once when Redis is not connected (ioredis reconnects in the background,
   * so the inbox recovers by itself), and bounded in time. `scan` calls read whole sets: their
   * bound is each command's (commandTimeout), not the call's.
   */
  async run<T>(work: () => Promise<T>, kind: 'call' | 'scan' = 'call'): Promise<T> {
    if (this.o.closed()) throw new InboxUnavailableError(`inbox ${this.o.location} is closed`);
    if (this.redis.status !== 'ready') throw this.unreachable();
    const p = work();
    p.catch(() => undefined);
    if (kind === 'scan') {
      try {
        return await p;
      } catch (err) {
        throw this.unavailable(err);
      }
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(this.unreachable(`no answer within ${this.o.timeoutMs} ms`)), this.o.timeoutMs);
    });
    try {
      return await Promise.race([p, timeout]);
    } catch (err) {
      throw this.unavailable(err);
    } finally {
      clearTimeout(timer);
    }
  }

  unreachable(detail?: string): InboxUnavailableError {
    const last = this.o.lastError();
    // 'connect': the socket is up but Redis has not answered the handshake (it hangs, or is loading).
    const why =
      detail ??
      (this.redis.status === 'connect'
        ? 'connected, but Redis does not answer'
        : last
          ? describeRedisError(last)
          : `connection ${this.redis.status}`);
    return new InboxUnavailableError(`inbox ${this.o.location}: Redis at ${this.o.server} is unreachable (${why})`);
  }

  private unavailable(err: unknown): unknown {
    if (err instanceof InboxUnavailableError || err instanceof UsageError) return err;
    const message = (err as { message?: unknown })?.message;
    if (typeof message === 'string' && /Command timed out/.test(message))
      return this.unreachable(`no answer within ${this.o.timeoutMs} ms`);
    if (isConnectionError(err)) return this.unreachable(describeRedisError(err));
    if ((err as { name?: unknown })?.name === 'ReplyError')
      return new InboxUnavailableError(`inbox ${this.o.location}: ${describeRedisError(err)}`);
    return err;
  }
}
