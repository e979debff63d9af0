/**
 * Before any case: is anything there? A CI job with a typo in its port must get one line naming
 * that, not twenty red cases each asking whether the secret is right.
 */
import { classify } from '../delivery/attempt.js';
import { connectOnce } from '../delivery/dispatcher.js';
import type { TlsOptions } from '../delivery/dispatcher.js';
import { UsageError } from '../util/errors.js';
import { hostAndPort } from '../util/options.js';

/** check could not judge at all: nothing answers at the URL, or the store it was told to read does not say what it holds. Exit 2. */
export class CheckPreflightError extends UsageError {
  override readonly name = 'CheckPreflightError';
}

/** Throws a CheckPreflightError naming what is wrong when no connection can be made to the URL. */
export async function preflight(url: URL, tls: TlsOptions, timeoutMs: number): Promise<void> {
  try {
    await connectOnce(url, tls, timeoutMs);
  } catch (err) {
    const { error, detail } = classify(err);
    const at = hostAndPort(url);
    const where = `${at.host}:${at.port}`;
    const why =
      error === 'refused'
        ? `nothing listens at ${where} (connection refused): is the receiver running, and is the port in --url right?`
        : error === 'dns'
          ? `cannot resolve ${url.hostname} (${detail}): is the host in --url right?`
          : error === 'timeout'
            ? `nothing answers at ${where} within ${timeoutMs / 1000}s (the connection timed out): is the host right, or a firewall in the way?`
            : error === 'tls'
              ? `the TLS handshake with ${where} failed (${detail}): give --ca FILE for a private CA, or --insecure for a local receiver`
              : `cannot connect to ${where} (${detail})`;
    throw new CheckPreflightError(why);
  }
}
