/**
 * The providers whose signature covers the URL (their `urlBound`), named here rather than read from
 * the providers: --help must not load every provider's code (test/cli.test.ts). test/docs.test.ts
 * holds this list to the providers' own descriptions (it once named Twilio before hookdrill spoke it).
 */
export const URL_BOUND_TITLES: readonly string[] = ['Square', 'HubSpot', 'Twilio', 'Google Cloud Pub/Sub', 'Contentful'];

const named = (titles: readonly string[]) =>
  titles.length <= 1 ? titles.join('') : `${titles.slice(0, -1).join(', ')} and ${titles.at(-1)}`;

/** One wording for `--public-url` wherever a request is signed for a URL-bound provider (send, check). */
export const PUBLIC_URL_HELP = `the URL the provider would post to, when a proxy in front of the receiver forwards to --url: ${named(URL_BOUND_TITLES)} sign it (requests carry X-Forwarded-Proto and -Host as the proxy adds them) (default: --url)`;

/** listen's `--public-url`: the same providers. */
export const LISTEN_PUBLIC_URL_HELP = `the URL the provider posts to, for schemes that sign it (${URL_BOUND_TITLES.join(', ')}): every request is verified over it; required for them, unless --trust-proxy`;
