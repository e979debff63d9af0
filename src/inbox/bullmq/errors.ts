import { maskRedisPassword } from './target.js';

/** Node socket errors that mean the server cannot be reached (or stopped answering). */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** An error that says Redis is not there (as opposed to Redis answering with an error). */
export function isConnectionError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; name?: unknown };
  if (typeof e?.code === 'string' && NETWORK_CODES.has(e.code)) return true;
  const message = typeof e?.message === 'string' ? e.message : '';
  return /Connection is closed|Stream isn't writeable|enableOfflineQueue|Reached the max retries per request|connect ETIMEDOUT|Connection timeout/i.test(
    message,
  );
}

/**
 * BullMQ's answers to a fenced move whose claim no longer holds the job: its lock is gone (the
 * lease ran out), another claim's token holds it, it is not active any more, or it was removed.
 * Each means "this outcome was not recorded": settle says false. (ErrorCode -1, -2, -3, -6.)
 */
export function isFenceError(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return code === -1 || code === -2 || code === -3 || code === -6;
}

/** Redis errors in words, the password never among them. */
export function describeRedisError(err: unknown): string {
  const e = err as { code?: string; message?: string };
  const message = maskRedisPassword(e?.message ?? String(err));
  if (e?.code === 'ECONNREFUSED') return 'connection refused: is Redis running, on that host and port?';
  if (e?.code === 'ENOTFOUND' || e?.code === 'EAI_AGAIN') return 'the host name does not resolve';
  if (/^(WRONGPASS|NOAUTH|NOPERM)/.test(message)) return `Redis refused the login: ${message}`;
  if (/^OOM/.test(message)) return `Redis is out of memory (maxmemory): ${message}`;
  if (/^READONLY/.test(message)) return `Redis is a read-only replica: ${message}`;
  if (/^(LOADING|MASTERDOWN|BUSY)/.test(message)) return `Redis cannot answer now: ${message}`;
  return message.split('\n')[0] ?? message;
}
