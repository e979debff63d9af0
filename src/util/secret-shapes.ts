/**
 * Secrets recognised by their shape, wherever they sit — the way secret scanners find them: each
 * rule names the gitleaks rule (or the GitHub secret-scanning / trufflehog detector) it follows.
 * Detection only: what replaces a match is redaction's business (src/fixtures/redact/secrets.ts);
 * the header filter (http-headers.ts) only asks whether a value holds one.
 *
 * Every pattern is global and sticky to word edges, so a rule never fires inside a longer token.
 * A match's `secret` group is the part that is secret; whatever precedes it (a prefix that says
 * which kind of key it is, a URL's scheme and user) is not, and a fake may keep it.
 */

export type SecretRule =
  | 'basic-auth'
  | 'bearer-token'
  | 'private-key'
  | 'stripe-client-secret'
  | 'stripe-access-token'
  | 'webhook-signing-secret'
  | 'paddle-key'
  | 'github-token'
  | 'github-fine-grained-pat'
  | 'npm-access-token'
  | 'slack-token'
  | 'slack-webhook-url'
  | 'aws-access-token'
  | 'aws-secret-access-key'
  | 'shopify-token'
  | 'jwt'
  | 'url-password'
  | 'keyed-credential';

export interface SecretShape {
  rule: SecretRule;
  /** What it is, for a summary line (never the value): singular, plural. */
  label: readonly [string, string];
  /** Global; the named group `secret` is the secret part, `keep` (if any) what comes before it. */
  pattern: RegExp;
  /** A further check on a match, where the shape alone would catch ordinary text. */
  accept?: (secret: string) => boolean;
}

/** RFC 7617: `Basic` and base64 of `user:password`; "Basic information" decodes to no such pair. */
function isBasicCredential(b64: string): boolean {
  if (b64.length % 4 !== 0) return false;
  const decoded = Buffer.from(b64, 'base64').toString('latin1');
  return decoded.includes(':') && /^[\x20-\x7e]+$/.test(decoded);
}

/**
 * RFC 6750's b64token after `Bearer`: a word of prose ("Bearer authentication") is all letters and
 * short; a token has a digit or a symbol in it, or is long.
 */
function isBearerToken(token: string): boolean {
  return token.length >= 8 && (/[\d._~+/=-]/.test(token) || token.length >= 20);
}

/**
 * An AWS secret access key is 40 characters of base64 (trufflehog's aws detector). A hex digest (a
 * commit's SHA-1) has the same length: a key has upper and lower case letters in it.
 */
export function isAwsSecretKey(text: string): boolean {
  return /^[A-Za-z0-9/+]{40}$/.test(text) && /[A-Z]/.test(text) && /[a-z]/.test(text) && /[0-9/+]/.test(text);
}

/** gitleaks' aws-access-token: an access key id (AKIA… long-term, ASIA… temporary). */
const AWS_KEY_PREFIX = '(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)';
const AWS_KEY_BODY = '[A-Z2-7]{16}';
const AWS_KEY_ID_ALONE = new RegExp(`^${AWS_KEY_PREFIX}${AWS_KEY_BODY}$`);

/** Whether a text is an AWS access key id and nothing else (`"AccessKeyId": "AKIA…"`). */
export function isAwsKeyId(text: string): boolean {
  return AWS_KEY_ID_ALONE.test(text);
}

/** Keys whose value is a credential in `key=value` text: a query string, a form, an env line. */
const CREDENTIAL_WORD = '(?:password|passwd|pwd|passphrase|secret|token|api_?key|apikey|access_?key|private_?key|client_?secret)';

export const SECRET_SHAPES: readonly SecretShape[] = [
  // The HTTP authentication schemes first: the token after `Bearer` may itself be of a known shape.
  {
    rule: 'basic-auth',
    label: ['a Basic credential', 'Basic credentials'],
    pattern: /(?<keep>(?<![\w-])Basic\s+)(?<secret>[A-Za-z0-9+/]{4,}={0,2})(?![\w+/=])/gi,
    accept: isBasicCredential,
  },
  {
    rule: 'bearer-token',
    label: ['a Bearer token', 'Bearer tokens'],
    pattern: /(?<keep>(?<![\w-])(?:Bearer|Token)\s+)(?<secret>[A-Za-z0-9._~+/-]+=*)(?![\w.~+/=-])/gi,
    accept: isBearerToken,
  },
  // gitleaks' private-key.
  {
    rule: 'private-key',
    label: ['a private key', 'private keys'],
    pattern:
      /(?<keep>-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----)(?<secret>[\s\S]{64,}?)-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----/g,
  },
  // Stripe's PaymentIntent / SetupIntent / Source `client_secret`: `<id>_secret_<secret>`; the id is not secret.
  {
    rule: 'stripe-client-secret',
    label: ['a Stripe client secret', 'Stripe client secrets'],
    pattern: /(?<keep>(?<![A-Za-z0-9_])(?:pi|seti|src)_[A-Za-z0-9]{10,}_secret_)(?<secret>[A-Za-z0-9]{10,})(?![A-Za-z0-9])/g,
  },
  // gitleaks' stripe-access-token (secret and restricted keys; publishable `pk_` keys are public).
  {
    rule: 'stripe-access-token',
    label: ['a Stripe API key', 'Stripe API keys'],
    pattern: /(?<keep>(?<![A-Za-z0-9_])(?:sk|rk)_(?:test|live|prod)_)(?<secret>[A-Za-z0-9]{10,99})(?![A-Za-z0-9])/g,
  },
  // Stripe's webhook signing secret, and Standard Webhooks' / Svix's (`whsec_` and base64):
  // GitHub secret scanning's stripe_webhook_signing_secret, widened to the base64 alphabet.
  {
    rule: 'webhook-signing-secret',
    label: ['a webhook signing secret', 'webhook signing secrets'],
    pattern: /(?<keep>(?<![\w])whsec_)(?<secret>[A-Za-z0-9+/_-]{16,}={0,2})(?![\w+/=-])/g,
  },
  // Paddle Billing's notification (webhook) secret key and its API keys, live and sandbox: the
  // prefixes Paddle's docs give (pdl_ntfset_…; pdl_live_apikey_…, pdl_sdbx_apikey_…).
  {
    rule: 'paddle-key',
    label: ['a Paddle secret or API key', 'Paddle secrets or API keys'],
    pattern: /(?<keep>(?<![\w])pdl_(?:ntfset|live_apikey|sdbx_apikey)_)(?<secret>[A-Za-z0-9_]{20,})(?![\w])/g,
  },
  // gitleaks' github-pat, github-oauth, github-app-token, github-refresh-token (trufflehog's widths).
  {
    rule: 'github-token',
    label: ['a GitHub token', 'GitHub tokens'],
    pattern: /(?<keep>(?<![\w])gh[pousr]_)(?<secret>[A-Za-z0-9]{36,255})(?![\w])/g,
  },
  // gitleaks' github-fine-grained-pat.
  {
    rule: 'github-fine-grained-pat',
    label: ['a GitHub token', 'GitHub tokens'],
    pattern: /(?<keep>(?<![\w])github_pat_)(?<secret>\w{22,255})(?![\w])/g,
  },
  // gitleaks' npm-access-token (case-insensitive, as gitleaks reads it): npm_ and 36 letters and digits.
  {
    rule: 'npm-access-token',
    label: ['an npm token', 'npm tokens'],
    pattern: /(?<keep>(?<![\w])npm_)(?<secret>[A-Za-z0-9]{36})(?![\w])/gi,
  },
  // gitleaks' slack-bot-token, slack-user-token, slack-app-token, slack-legacy-*, slack-config-*-token.
  {
    rule: 'slack-token',
    label: ['a Slack token', 'Slack tokens'],
    pattern: /(?<keep>(?<![\w.-])(?:xoxe\.xox[bp]|xox[abposre]|xapp)-)(?<secret>[A-Za-z0-9-]{10,})(?![\w-])/g,
  },
  // gitleaks' slack-webhook-url: the path is the credential.
  {
    rule: 'slack-webhook-url',
    label: ['a Slack webhook URL', 'Slack webhook URLs'],
    pattern: /(?<keep>hooks\.slack\.com\/(?:services|workflows|triggers)\/)(?<secret>[A-Za-z0-9+/_-]{20,})/g,
  },
  // gitleaks' aws-access-token (the key id, which names the account's key).
  {
    rule: 'aws-access-token',
    label: ['an AWS access key id', 'AWS access key ids'],
    pattern: new RegExp(`(?<keep>(?<![A-Z0-9])${AWS_KEY_PREFIX})(?<secret>${AWS_KEY_BODY})(?![A-Z0-9])`, 'g'),
  },
  // The secret key written after its name (gitleaks' generic rule, as AWS's credentials file and
  // environment write it). Alone, 40 characters of base64 are too common to be taken for one:
  // redaction also takes them beside a key id (src/fixtures/redact/secrets.ts).
  {
    rule: 'aws-secret-access-key',
    label: ['an AWS secret access key', 'AWS secret access keys'],
    pattern: /(?<keep>(?:aws_?)?secret_?access_?key["']?\s*[:=]\s*["']?)(?<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/gi,
    accept: isAwsSecretKey,
  },
  // gitleaks' shopify-access-token, shopify-custom-access-token, shopify-private-app-access-token, shopify-shared-secret.
  {
    rule: 'shopify-token',
    label: ['a Shopify token', 'Shopify tokens'],
    pattern: /(?<keep>(?<![\w])shp(?:at|ca|pa|ss)_)(?<secret>[a-fA-F0-9]{32})(?![\w])/g,
  },
  // gitleaks' jwt: a JSON header and a JSON payload, base64url, and a signature.
  {
    rule: 'jwt',
    label: ['a JWT', 'JWTs'],
    pattern: /(?<keep>)(?<secret>(?<![\w-])eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*)/g,
  },
  // trufflehog's URI detector: scheme://user:password@host (a database URL, a git remote).
  {
    rule: 'url-password',
    label: ['a password in a URL', 'passwords in URLs'],
    pattern: /(?<keep>(?<![\w+.-])[a-z][a-z0-9+.-]*:\/\/[^\s:/?#@"'<>]+:)(?<secret>[^\s/?#@"'<>]+)(?=@)/gi,
  },
  // `access_token=…` in a query string, `DB_PASSWORD=…` in an env line (gitleaks' generic-api-key,
  // narrowed to `=` after a credential's name, so that prose with a colon is left alone).
  {
    rule: 'keyed-credential',
    label: ['a credential in a key=value', 'credentials in key=values'],
    pattern: new RegExp(`(?<keep>(?<![^\\s?&;,"'])[\\w.-]*?${CREDENTIAL_WORD}[\\w.-]*=)(?<secret>[^\\s&#;,"'<>]+)`, 'gi'),
  },
];

/** Whether a text holds a secret of any known shape (a header's value, say). */
export function hasSecretShape(text: string): boolean {
  for (const shape of SECRET_SHAPES) {
    for (const m of text.matchAll(shape.pattern)) {
      const secret = m.groups?.secret ?? '';
      if (shape.accept === undefined || shape.accept(secret)) return true;
    }
  }
  return false;
}
