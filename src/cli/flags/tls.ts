import type { Command } from 'commander';

export interface TlsFlags {
  insecure?: boolean;
  ca?: string;
}

/** --ca FILE and --insecure, for receivers behind a certificate of their own. */
export function declareTls(cmd: Command): Command {
  return cmd
    .option('--ca <file>', "trust this CA (PEM file) for the receiver's certificate, beside the system's")
    .option('--insecure', 'accept any certificate from the receiver (self-signed, expired): local receivers only');
}

export function tlsOptions(flags: TlsFlags): { insecure?: boolean; ca?: string } {
  return { ...(flags.insecure ? { insecure: true } : {}), ...(flags.ca !== undefined ? { ca: flags.ca } : {}) };
}
