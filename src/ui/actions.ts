import { Agent } from 'undici';
import { attempt } from '../delivery/attempt.js';
import { resignStored } from '../delivery/signer.js';
import { withSecret } from '../providers/kept-body.js';
import { placeQuery } from '../providers/query-placed.js';
import { openInboxForCommand } from '../inbox/open.js';
import type { StoredDelivery } from '../inbox/index.js';
import type { Provider } from '../providers/index.js';
import { endToEnd } from '../util/http-headers.js';
import { UsageError } from '../util/errors.js';
import { parseUrl } from '../util/options.js';
import { shellQuote } from '../fixtures/capture.js';

/** Who signs what the page sends: the inspector's own provider and secrets, which never reach the page. */
export interface UiSigner {
  provider: Provider;
  secrets: readonly string[];
}

async function stored(inbox: string, id: string, source: string | undefined): Promise<StoredDelivery> {
  const db = await openInboxForCommand(inbox, { readonly: true });
  try {
    const [row] = await db.select({ ids: [id], ...(source ? { source } : {}) }, { limit: 1 });
    if (!row) throw new UsageError(`no delivery ${id}`);
    return row;
  } finally {
    await db.close();
  }
}

/**
 * A stored delivery (or its body as edited on the page) signed afresh, as a retry is signed: a
 * fresh timestamp over exactly these bytes, the delivery's id — the receiver sees a redelivery,
 * and an edited body verifies as the provider's own would.
 */
async function signed(
  inbox: string,
  signer: UiSigner,
  id: string,
  source: string | undefined,
  edited: string | undefined,
  to: URL,
): Promise<{ body: Buffer; headers: Record<string, string>; url: URL }> {
  const row = await stored(inbox, id, source);
  const kept = edited !== undefined ? Buffer.from(edited, 'utf8') : (row.body ?? Buffer.alloc(0));
  // A secret the scheme carries in the body (Graph's clientState) is not kept in the inbox, nor
  // shown on the page to edit: written back here, as the sender sends it.
  const body = withSecret(signer.provider, kept, signer.secrets);
  const headers = resignStored(signer.provider, endToEnd(row.headers), body, signer.secrets, {
    deliveryId: row.deliveryId,
    eventType: row.eventType,
    url: to.href,
  });
  // A hash the signature covers in the URL (Twilio's bodySHA256) goes into its query.
  const placed = placeQuery(signer.provider, to, headers);
  return { body, headers: placed.headers, url: placed.url };
}

export interface ReplayAnswer {
  to: string;
  status?: number;
  error?: string;
  /** The first line of the receiver's answer. */
  said?: string;
  ms: number;
  edited: boolean;
}

/** Replay one delivery to a URL, once: re-signed, its body as stored or as edited. */
export async function replayOne(
  inbox: string,
  signer: UiSigner,
  o: { id: string; source?: string; to: string; body?: string },
): Promise<ReplayAnswer> {
  const { body, headers, url } = await signed(inbox, signer, o.id, o.source, o.body, parseUrl(o.to, 'to'));
  const dispatcher = new Agent();
  try {
    const r = await attempt({ url, headers, body, timeoutMs: 10_000, maxRedirects: 0, dispatcher });
    const said = r.bodySnippet?.trim().split('\n')[0];
    return {
      to: url.href,
      ...(r.status !== undefined ? { status: r.status } : {}),
      ...(r.error ? { error: r.detail ?? r.error } : {}),
      ...(said ? { said: said.slice(0, 200) } : {}),
      ms: Math.round(r.latencyMs),
      edited: o.body !== undefined,
    };
  } finally {
    await dispatcher.close();
  }
}

/**
 * The delivery as a `curl` command, signed now (the signature is valid as long as the provider's
 * tolerance, 5 minutes for most): what to paste into a terminal to send it once by hand. The
 * signature is in it; the secret is not.
 */
export async function signedCurl(inbox: string, signer: UiSigner, o: { id: string; source?: string; to: string }): Promise<string> {
  const provider = signer.provider;
  // A request that carries the secret itself (a token, credentials, Graph's clientState) signs
  // nothing: its curl command would print the secret to the page and the shell's history.
  if (provider.tokenOnly)
    throw new UsageError(
      `${provider.title} sends the secret itself (${provider.signatureHeader}), not a signature: no curl command is shown, as it would print the secret — replay from this page instead`,
    );
  const { body, headers, url } = await signed(inbox, signer, o.id, o.source, undefined, parseUrl(o.to, 'to'));
  const parts = ['curl', '-sS', '-X', 'POST', shellQuote(url.href)];
  for (const [k, v] of Object.entries(headers)) parts.push('-H', shellQuote(`${k}: ${v}`));
  parts.push('--data-binary', shellQuote(body.toString('utf8')));
  return parts.join(' ');
}
