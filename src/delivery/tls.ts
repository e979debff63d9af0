import { readFileSync } from 'node:fs';
import { UsageError } from '../util/errors.js';
import type { TlsOptions } from './dispatcher.js';

/** --ca FILE (read now: a missing file is bad input, not a TLS error per attempt) and --insecure. */
export function resolveTls(o: { insecure?: boolean | undefined; ca?: string | undefined }): TlsOptions {
  let ca: string | undefined;
  if (o.ca !== undefined) {
    try {
      ca = readFileSync(o.ca, 'utf8');
    } catch (err) {
      throw new UsageError(`--ca ${o.ca}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
    if (!ca.includes('-----BEGIN CERTIFICATE-----')) throw new UsageError(`--ca ${o.ca}: not a PEM certificate file`);
  }
  return { ...(o.insecure ? { insecure: true } : {}), ...(ca ? { ca } : {}) };
}
