import { UsageError } from '../util/errors.js';
import { readRegularFile } from '../util/regular-file.js';
import type { RegularFileUse } from '../util/regular-file.js';
import type { TlsOptions } from './dispatcher.js';

/**
 * --ca names a PEM bundle: a device or FIFO (/dev/zero, a shell's <(…)) is refused before it is
 * read, since reading one blocks the event loop and grows without bound. 16 MiB is far more than
 * any CA bundle (the whole Mozilla store is about 200 KiB).
 */
const CA_FILE: RegularFileUse = { what: '--ca', hint: 'give --ca a PEM certificate file', maxBytes: 16 * 1024 * 1024 };

/** --ca FILE (read now: a missing file is bad input, not a TLS error per attempt) and --insecure. */
export function resolveTls(o: { insecure?: boolean | undefined; ca?: string | undefined }): TlsOptions {
  let ca: string | undefined;
  if (o.ca !== undefined) {
    ca = readRegularFile(o.ca, CA_FILE);
    if (ca === undefined) throw new UsageError(`--ca ${o.ca}: cannot read it (ENOENT)`);
    if (!ca.includes('-----BEGIN CERTIFICATE-----')) throw new UsageError(`--ca ${o.ca}: not a PEM certificate file`);
  }
  return { ...(o.insecure ? { insecure: true } : {}), ...(ca ? { ca } : {}) };
}
