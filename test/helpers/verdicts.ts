/**
 * Receivers not written in TypeScript, as users' often are not, judged by `check` and `chaos`:
 * test/receivers/webhook_receiver.py (Python's standard library; right, or wrong in exactly one
 * way) and test/receivers/official_library.mjs (plain Node on each provider's official library).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run as check } from '../../src/check/run.js';
import type { CheckOptions, CheckResult } from '../../src/check/run.js';
import { snsCertificateFile } from '../../src/providers/sns-certificate.js';
import { SECRETS, publicKeyOf } from './official.js';
import { freePort } from './ports.js';
import { PYTHON } from './python.js';
import { paypal } from '../../src/providers/paypal.js';
import { tempDir } from './tmp.js';

export const PY = fileURLToPath(new URL('../../../test/receivers/webhook_receiver.py', import.meta.url));
export const OFFICIAL = fileURLToPath(new URL('../../../test/receivers/official_library.mjs', import.meta.url));

/** A secret of each provider's shape. */
export const SECRET: Record<string, string> = {
  stripe: 'whsec_verdicts_test',
  github: 'a secret to everybody, hookdrill',
  slack: '8f742231b10e8888abcd99yyyzzz85a5',
  standard: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  svix: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
  shopify: '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',
  paddle: 'pdl_ntfset_01hkdrl0verdicts000000000000_fakeKeyForHookdrillVerdicts00',
  workos: 'wh_secret_hookdrill_verdicts_000',
  square: 'hookdrillSquareVerdictsKey00',
  // An Ed25519 seed (RFC 8032, 7.1 TEST 2): check signs with it; the receiver holds its public key.
  discord: '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
  line: '0f5a3b7c9d1e2f4a6b8c0d2e4f6a8b0c',
  hubspot: 'hs-verdicts-secret-5a1f7c3e-2d94',
  zoom: 'zm-verdicts-token-hookdrill-3Kx9',
  linear: 'lin_wh_hookdrill_verdicts_signing_0',
  sendgrid: SECRETS.sendgrid as string,
  gitlab: 'hookdrill-gitlab-verdicts-token-7Q',
  postmark: 'hookdrill-postmark:verdicts-password-4Wq8',
  intercom: 'hookdrill-intercom-verdicts-secret-8c1d',
  twitch: 'hookdrill-twitch-verdicts-secret-2Lm',
  mailgun: 'key-hookdrill0mailgun0verdicts00000',
  twilio: '0b1c2d3e4f5a69788796a5b4c3d2e1f0',
  pubsub: SECRETS.pubsub as string,
  plaid: SECRETS.plaid as string,
  // 64 characters, as the toolkit requires of a Contentful signing secret.
  contentful: 'hookdrill-contentful-verdicts-signing-secret-0123456789abcdefXYZ',
  paypal: '3VL83952PN504172UWEBHOOKID',
  graph: 'hookdrill-graph-verdicts-state-9Pk4',
};
// The pack's senders (src/providers/pack.ts): each secret as test/helpers/official.ts shapes it.
for (const p of ['bitbucket', 'pagerduty', 'mux', 'vercel', 'calendly', 'typeform', 'sentry', 'coinbase', 'notion'])
  SECRET[p] = SECRETS[p] as string;
// SNS signs with hookdrill's own RSA key only (its certificate is what the SNS host serves).
Object.defineProperty(SECRET, 'sns', { get: () => SECRETS.sns, enumerable: true });

/**
 * How a receiver trusts hookdrill's SNS host in test mode: Python through SSL_CERT_FILE, Node through
 * NODE_EXTRA_CA_CERTS, each the certificate file (PayPal's certificate host likewise, its own file);
 * nothing for any other provider.
 */
function trusts(provider: string, how: 'SSL_CERT_FILE' | 'NODE_EXTRA_CA_CERTS'): string {
  if (provider === 'paypal') return `${how}=${paypal.servedAt?.().trustFile} `;
  return provider === 'sns' ? `${how}=${snsCertificateFile()} ` : '';
}

/** What the receiver is configured with: the secret, or for a key-pair provider its public key. */
export const receiverSecret = (provider: string) => publicKeyOf(SECRET[provider] as string, provider);

export interface Receiver {
  /** The shell command that starts it on $PORT. */
  command: string;
  /** A command printing the ids it holds. */
  stored: string;
}

/** The Python receiver, with a flaw or none; its store is a file of ids (or SQLite, for a .db name). */
export function python(provider: string, flaw = '', extra = '', storeName = 'stored.txt'): Receiver {
  const store = join(tempDir(), storeName);
  return {
    command: `${trusts(provider, 'SSL_CERT_FILE')}${PYTHON} ${PY} serve --provider ${provider} --secret '${receiverSecret(provider)}' --port "$PORT" --store ${store}${flaw ? ` --flaw ${flaw}` : ''} ${extra}`,
    stored: `${PYTHON} ${PY} ids --store ${store}`,
  };
}

/** The plain-Node receiver on the provider's official library. */
export function official(provider: string, env: Record<string, string> = {}): Receiver {
  const store = join(tempDir(), 'stored.txt');
  const vars = Object.entries(env)
    .map(([k, v]) => `${k}='${v}' `)
    .join('');
  return {
    command: `${vars}${trusts(provider, 'NODE_EXTRA_CA_CERTS')}node ${OFFICIAL} ${provider} '${receiverSecret(provider)}' ${store}`,
    stored: `cat ${store} 2>/dev/null || true`,
  };
}

/** check's whole battery (or what `more` selects) against the receiver, which check starts and stops itself. */
export async function checkReceiver(provider: string, r: Receiver, more: Partial<CheckOptions> = {}): Promise<CheckResult> {
  const port = await freePort();
  return check({
    url: `http://127.0.0.1:${port}/`,
    provider,
    secrets: [SECRET[provider] as string],
    receiver: r.command,
    stored: r.stored,
    ...more,
  });
}

export const named = (r: CheckResult, status: 'fail' | 'warn') => r.cases.filter((c) => c.status === status).map((c) => c.name);
export const explain = (r: CheckResult) => JSON.stringify(r.cases.filter((c) => c.status !== 'pass' && c.status !== 'skipped'));

/** A Python receiver started by the test itself (not by check): where it listens, its store, its dump. */
export interface StartedPython {
  url: string;
  store: string;
  /** With `dump`: the folder each request is written to, as it arrived. */
  dump?: string;
  stop(): void;
}

/**
 * The Python receiver on a free port, resolved once it prints that it listens (rejected if it exits
 * first). `secret` defaults to the provider's test secret; `dump` makes it write every request raw.
 */
export async function startPython(
  provider: string,
  o: { flaw?: string; secret?: string; dir?: string; dump?: boolean } = {},
): Promise<StartedPython> {
  const dir = o.dir ?? tempDir();
  const store = join(dir, `${provider}-stored.txt`);
  const dump = o.dump ? join(dir, `dump-${provider}`) : undefined;
  if (dump) mkdirSync(dump);
  const port = await freePort();
  const args = [
    PY,
    'serve',
    '--provider',
    provider,
    '--secret',
    o.secret ?? receiverSecret(provider),
    '--port',
    String(port),
    '--store',
    store,
  ];
  const child = spawn(PYTHON, [...args, ...(o.flaw ? ['--flaw', o.flaw] : []), ...(dump ? ['--dump', dump] : [])], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise((ok, fail) => {
    child.stdout.once('data', ok);
    child.once('exit', () => fail(new Error(`the Python ${provider} receiver exited before listening`)));
  });
  return { url: `http://127.0.0.1:${port}/`, store, ...(dump ? { dump } : {}), stop: () => child.kill() };
}

/** The ids a Python receiver's store holds (its `ids` command). */
export function storedIds(store: string): string[] {
  return execFileSync(PYTHON, [PY, 'ids', '--store', store], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
}
