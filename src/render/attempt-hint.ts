/**
 * What to check when an attempt fails, in words, for the line that says it failed: a 401 on
 * Stripe's schedule is ~68 hours of retries of a wrong secret unless someone is told at once.
 * Only the failures whose cause is nearly always the same get a hint; the rest say nothing.
 */
export function attemptHint(a: { status?: number | undefined; error?: string | undefined }, url?: string): string | undefined {
  if (a.status === 401 || a.status === 403)
    return `${a.status} is the receiver refusing the request: check --secret is the endpoint's signing secret, and --provider the sender it verifies`;
  // Stripe's own example receiver answers 400 to a signature it cannot verify, as many copies of it do.
  if (a.status === 400)
    return "400 is the receiver refusing the request — most often a signature it could not verify: check --secret is the endpoint's signing secret, and --provider the sender it verifies";
  if (a.status === 404 || a.status === 405) return `${a.status}: nothing takes POST at that path — check the URL's path`;
  if (a.status === 413) return '413: the body is larger than the receiver takes';
  if (a.error === 'refused')
    return `nothing listens at ${hostOf(url) ?? 'the URL'} (connection refused): is the receiver running, on that port?`;
  if (a.error === 'dns') return `${hostOf(url) ?? 'the host'} does not resolve: check the URL's host`;
  if (a.error === 'tls')
    return 'the TLS handshake failed: an https:// URL to a plain-HTTP port, or a certificate the system does not trust';
  return undefined;
}

function hostOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return new URL(url).host;
  } catch {
    return undefined;
  }
}
