/** `hookdrill verify`: one captured request judged, from a file, stdin, a HAR entry, or an inbox row. */
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { openInbox, resolveTarget } from '../inbox/open.js';
import { getProvider } from '../providers/index.js';
import type { ProviderName } from '../providers/index.js';
import { UsageError } from '../util/errors.js';
import { openRegularFile } from '../util/regular-file.js';
import { parseUrl } from '../util/options.js';
import { stringOption, stringsOption } from '../util/shapes.js';
import type { Strings } from '../util/shapes.js';
import { explain } from './explain.js';
import type { VerifyResult } from './explain.js';
import { parseCapture, parseRawHttp } from './request.js';
import type { CapturedRequest } from './request.js';

export type { VerifyResult } from './explain.js';

export interface VerifyRequestOptions {
  /** A raw HTTP request or a HAR file; `-` (or nothing, with `stdin`) reads a raw request from stdin. */
  file?: string;
  /** With a HAR file: which entry (1-based); default: its only POST. */
  entry?: number | string;
  /** Judge a row of this inbox instead (with `id`). */
  inbox?: string;
  id?: string;
  provider?: ProviderName | (string & {});
  secrets?: Strings;
  /** Judge a request `listen --ui` refused instead: the inspector's URL as listen printed it (its token in it) … */
  ui?: string;
  /** … and the refused request's id (r12). */
  refused?: string;
  /** Judge as of this moment (ISO time or Unix seconds); default: when the capture says it arrived, else now. */
  at?: string;
  /** Square, HubSpot: the URL the receiver verifies over (as listen's --public-url); default: the capture's own, tried both ways. */
  publicUrl?: string;
  /** The inspector's token, where the --ui URL carries none (HOOKDRILL_UI_TOKEN: argv is every local user's to read). */
  uiToken?: string;
  /** Where `-` reads from (the CLI's stdin). */
  stdin?: Readable;
}

/** The most a capture may be: beyond the largest event any provider sends, and never all of /dev/zero. */
const MAX_CAPTURE_BYTES = 64 * 1024 * 1024;

/** A capture is named so in the one line that refuses it. */
const CAPTURE_FILE = { what: 'capture', hint: 'give a raw HTTP request or a HAR file, or pipe one in with -' };

async function readCapped(stream: Readable, name: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > MAX_CAPTURE_BYTES) {
      stream.destroy();
      throw new UsageError(`${name}: larger than ${MAX_CAPTURE_BYTES / 1024 / 1024} MiB: not one captured request`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

async function fromInbox(o: VerifyRequestOptions): Promise<CapturedRequest> {
  if (!o.id) throw new UsageError('--inbox goes with --id DELIVERY_ID: the row to verify');
  if (!o.provider) throw new UsageError('--inbox: give --provider, the source the row was stored under');
  const inbox = await openInbox(resolveTarget(o.inbox as string), { readonly: true, create: false });
  try {
    const row = await inbox.get({ source: o.provider, deliveryId: o.id });
    if (!row) throw new UsageError(`no ${o.provider} row ${JSON.stringify(o.id)} in the inbox`);
    if (row.body === null) throw new UsageError(`row ${o.id} keeps no body (pruned): nothing to verify`);
    return { headers: row.headers, body: row.body, arrivedAtMs: row.receivedAt, source: `inbox row ${o.id}` };
  } finally {
    await inbox.close();
  }
}

/** A request listen --ui refused, fetched from its inspector by id: the bytes as they arrived. */
async function fromInspector(o: VerifyRequestOptions): Promise<CapturedRequest> {
  const id = stringOption(o.refused, 'refused');
  if (!id || !/^r\d{1,12}$/.test(id))
    throw new UsageError('--ui goes with --refused ID: the refused request, as the inspector lists it (r12)');
  let page: URL;
  try {
    page = new URL(o.ui as string);
  } catch {
    throw new UsageError(`--ui ${JSON.stringify(o.ui)}: not a URL (give the inspector URL listen printed, with its token)`);
  }
  // listen prints an http:// URL; any other scheme is no inspector (javascript: has no origin to ask, and was an internal error).
  if (page.protocol !== 'http:' && page.protocol !== 'https:')
    throw new UsageError(
      `--ui ${JSON.stringify(page.protocol)}…: not an http(s) URL (give the inspector URL listen printed, with its token)`,
    );
  // The token from the environment first: in the URL it sits in argv, readable by every local user.
  const token = o.uiToken || page.searchParams.get('token');
  if (!token) throw new UsageError('--ui: no token: set HOOKDRILL_UI_TOKEN to the token listen printed (or give the URL with its ?token=)');
  const { res, body } = await askInspector(new URL(`/api/refused/${id}`, page), token, page.origin);
  if (!res.ok || typeof body.raw !== 'string')
    throw new UsageError(`--refused ${id}: ${body.error ?? `the inspector answered ${res.status}`}`);
  const req = parseRawHttp(Buffer.from(body.raw, 'base64'), `refused request ${id}`);
  return { ...req, ...(typeof body.at === 'number' ? { arrivedAtMs: body.at } : {}) };
}

/** How long verify waits for the inspector: it answers from memory on this machine, at once, or not at all. */
const INSPECTOR_TIMEOUT_MS = 10_000;

/** The inspector's answer and its JSON, within INSPECTOR_TIMEOUT_MS: one that never answers held verify for fetch's 300 s. */
async function askInspector(
  url: URL,
  token: string,
  origin: string,
): Promise<{ res: Response; body: { error?: string; raw?: string; at?: number } }> {
  const signal = AbortSignal.timeout(INSPECTOR_TIMEOUT_MS);
  const fail = (err: unknown): never => {
    if (signal.aborted)
      throw new UsageError(
        `--ui ${origin}: the inspector did not answer within ${INSPECTOR_TIMEOUT_MS / 1000} s: is listen --ui running, and not stopped (^Z)?`,
      );
    throw new UsageError(
      `--ui ${origin}: no inspector answers (${(err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message}): is listen --ui running?`,
    );
  };
  const res = await fetch(url, { headers: { 'x-hookdrill-token': token }, signal }).catch(fail);
  // The body too: an inspector may send its head and stall.
  const body = (await res.json().catch((err: unknown) => (signal.aborted ? fail(err) : {}))) as {
    error?: string;
    raw?: string;
    at?: number;
  };
  return { res, body };
}

/** A moment: Unix seconds, or an ISO 8601 time with its zone. */
function parseAt(text: string): number {
  if (/^\d{9,11}$/.test(text)) return Number(text) * 1000;
  const ms = /\d{4}-\d\d-\d\dT.*(Z|[+-]\d\d:?\d\d)$/i.test(text) ? Date.parse(text) : Number.NaN;
  if (!Number.isFinite(ms))
    throw new UsageError(`--at ${JSON.stringify(text)}: expected Unix seconds or an ISO time with its zone (2026-12-03T17:45:00Z)`);
  return ms;
}

export async function run(o: VerifyRequestOptions): Promise<VerifyResult> {
  const secrets = stringsOption(o.secrets, 'secrets') ?? [];
  const file = stringOption(o.file, 'file');
  const entry =
    o.entry === undefined
      ? undefined
      : /^[1-9]\d{0,6}$/.test(String(o.entry))
        ? Number(o.entry)
        : (() => {
            throw new UsageError(`--entry ${String(o.entry)}: expected an entry number from 1`);
          })();
  if (o.provider !== undefined) getProvider(o.provider);
  const atMs = o.at === undefined ? undefined : parseAt(o.at);
  let req: CapturedRequest;
  if (o.refused !== undefined && o.ui === undefined) throw new UsageError('--refused goes with --ui URL: the inspector that lists it');
  if (o.ui !== undefined) {
    if (file !== undefined || o.inbox !== undefined)
      throw new UsageError('give one request: a capture, --inbox with --id, or --ui with --refused');
    req = await fromInspector(o);
  } else if (o.inbox !== undefined) {
    if (file !== undefined) throw new UsageError('give a capture or --inbox with --id, not both');
    req = await fromInbox(o);
  } else if (file === undefined || file === '-') {
    const stdin = o.stdin;
    if (!stdin || (stdin as { isTTY?: boolean }).isTTY)
      throw new UsageError('give a captured request: a file (raw HTTP or HAR), - with a request piped in, or --inbox FILE --id ID');
    req = parseCapture(await readCapped(stdin, 'stdin'), 'stdin', entry);
  } else {
    // Opened non-blocking and held to a regular file first: a FIFO or a device hung verify for ever.
    const { fd } = openRegularFile(file, CAPTURE_FILE);
    const stream = createReadStream('', { fd });
    const bytes = await readCapped(stream, file).catch((err: unknown) => {
      if (err instanceof UsageError) throw err;
      throw new UsageError(`${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    });
    req = parseCapture(bytes, file, entry, file);
  }
  const url = o.publicUrl === undefined ? undefined : parseUrl(stringOption(o.publicUrl, 'publicUrl'), '--public-url').href;
  return explain(req, {
    ...(o.provider !== undefined ? { provider: o.provider } : {}),
    secrets,
    ...(atMs !== undefined ? { atMs } : {}),
    ...(url !== undefined ? { url } : {}),
  });
}
