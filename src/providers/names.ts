import type { CheckedDeclaration } from './declaration.js';
import { PACK_NAMES, packDeclaration } from './pack.js';

/** Provider names alone, so that `--help` can list them without loading any provider code. */
export const PROVIDER_NAMES = [
  'stripe',
  'github',
  'slack',
  'standard',
  'svix',
  'shopify',
  'paddle',
  'workos',
  'square',
  'discord',
  'line',
  'hubspot',
  'zoom',
  'linear',
  'sendgrid',
  'gitlab',
  'postmark',
  'intercom',
  'twitch',
  'mailgun',
  'twilio',
  'sns',
  'pubsub',
  'plaid',
  'contentful',
  'paypal',
  'graph',
] as const;

/*
 * Providers a team declares in its project file (providers/declaration.ts), registered when the
 * CLI starts (or by the library's declareProvider): names and declarations only, so knowing them
 * costs no provider code. A project file that could not be read is kept as its error, and named
 * when one of its providers is asked for.
 */
const declared = new Map<string, CheckedDeclaration>();
/** Those the project file declared: replaced whole when it is read again (another directory, the file changed). */
const fromProject = new Set<string>();
let fault: Error | undefined;

/** A declaration from the library (declareProvider): it stays for the process. */
export function registerDeclarations(list: readonly CheckedDeclaration[]): void {
  for (const d of list) declared.set(d.name, d);
}

/** What the project file declares now, or why it could not be read: what an earlier read registered goes. */
export function replaceProjectDeclarations(found: readonly CheckedDeclaration[] | Error): void {
  for (const name of fromProject) declared.delete(name);
  fromProject.clear();
  fault = found instanceof Error ? found : undefined;
  if (found instanceof Error) return;
  registerDeclarations(found);
  for (const d of found) fromProject.add(d.name);
}

export function declarationFault(): Error | undefined {
  return fault;
}

/** A declared provider: the project file's or the library's first, then hookdrill's pack (providers/pack.ts) — a team's own statement wins. */
export function declarationOf(name: string): CheckedDeclaration | undefined {
  return declared.get(name) ?? packDeclaration(name);
}

/** Every provider a name can name here: the built-in ones, the pack's, then those declared. */
export function knownProviderNames(): string[] {
  return [...PROVIDER_NAMES, ...PACK_NAMES.filter((n) => !declared.has(n)), ...declared.keys()];
}
