// hookdrill ui: the page. Every value from the inbox is the sender's, so it is only ever set as
// text (textContent), never as markup; the token comes from the page's URL and goes with every
// API call as a header, which no other site can set.
const token = new URLSearchParams(location.search).get('token') ?? '';
const $ = (id) => document.getElementById(id);

async function api(path, init = {}) {
  const res = await fetch(path, {
    ...init,
    headers: { 'x-hookdrill-token': token, 'content-type': 'application/json', ...(init.headers ?? {}) },
  });
  const body = await res.json();
  if (!res.ok) throw new Error(body.error ?? `HTTP ${res.status}`);
  return body;
}

/** An element with text content (never HTML) and optional class. */
function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function ago(ms) {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  return `${(s / 3600).toFixed(1)}h ago`;
}

/** What the chart stacks, bottom up: where the minute's rows stand now, then what listen refused. */
const OUTCOMES = ['done', 'pending', 'working', 'dead', 'refused'];

/** Deliveries per minute over the last hour, each bar split by outcome; hovering a bar says its counts. */
function chart(o, refusedPerMinute) {
  const byOutcome = { ...o.perMinuteByStatus, refused: refusedPerMinute ?? [] };
  const totals = o.perMinute.map((n, i) => n + (byOutcome.refused[i] ?? 0));
  const peak = Math.max(1, ...totals);
  const shown = OUTCOMES.filter((k) => (byOutcome[k] ?? []).some((n) => n > 0));
  $('chart').replaceChildren(
    ...totals.map((total, i) => {
      const bar = el('div');
      bar.style.height = `${Math.round((total / peak) * 100)}%`;
      const parts = [];
      for (const k of OUTCOMES) {
        const n = byOutcome[k]?.[i] ?? 0;
        if (n === 0) continue;
        const seg = el('span', undefined, k);
        seg.style.flexGrow = String(n);
        bar.append(seg);
        parts.push(`${n} ${k}`);
      }
      bar.title = `${60 - i} min ago: ${total}${parts.length ? ` (${parts.join(', ')})` : ''}`;
      bar.dataset.total = String(total);
      return bar;
    }),
  );
  $('legend').replaceChildren(...shown.map((k) => el('span', k, k)));
}

async function overview() {
  const r = await api('/api/overview');
  const o = r.overview;
  $('inbox').textContent = r.inbox;
  const counts = $('counts');
  counts.replaceChildren(...['pending', 'working', 'done', 'dead'].map((s) => el('span', `${s} ${o.stats.counts[s]}`, s)));
  counts.dataset.total = String(o.stats.total);
  $('oldest').textContent = o.stats.oldestPendingAt ? `oldest pending: ${ago(o.stats.oldestPendingAt)}` : 'oldest pending: none';
  $('dead').tBodies[0].replaceChildren(
    ...o.deadByError.map((g) => {
      const tr = el('tr');
      const act = el('td');
      const b = el('button', 'requeue…');
      b.type = 'button';
      b.addEventListener('click', () => previewRequeue({ status: 'dead', error: g.error }, act));
      act.append(b);
      tr.append(el('td', g.count), el('td', g.error), el('td', g.exampleId), act);
      return tr;
    }),
  );
  $('requeues').replaceChildren(
    ...(o.requeues ?? [])
      .slice(0, 10)
      .map((q) =>
        el('li', `${new Date(q.at).toISOString()}: ${q.moved} row${q.moved === 1 ? '' : 's'}${q.resetAttempts ? ', attempts reset' : ''}`),
      ),
  );
  return o;
}

/** A requeue is previewed (its dry-run count) before it is done, as the CLI's --dry-run. */
async function previewRequeue(selector, where) {
  const dry = await api('/api/requeue', { method: 'POST', body: JSON.stringify({ ...selector, dryRun: true }) });
  const confirm = el('button', `requeue ${dry.matched} row${dry.matched === 1 ? '' : 's'}`);
  confirm.type = 'button';
  confirm.className = 'confirm';
  confirm.addEventListener('click', async () => {
    const done = await api('/api/requeue', { method: 'POST', body: JSON.stringify(selector) });
    where.replaceChildren(el('span', `requeued ${done.moved}`));
    refresh();
  });
  where.replaceChildren(confirm);
}

const FILTER_DEBOUNCE_MS = 300;

function filters() {
  const q = new URLSearchParams();
  for (const [k, v] of new FormData($('filters'))) if (v) q.append(k, String(v));
  return q;
}

let rowsAsked = 0;
async function rows() {
  const q = filters();
  if (![...q.keys()].length) q.set('limit', '200');
  const asked = ++rowsAsked;
  const r = await api(`/api/rows?${q}`);
  // An answer to filters the user has since changed is not shown over the newer one.
  if (asked !== rowsAsked) return;
  const list = r.view === 'rows' ? r.rows : [];
  $('rows').tBodies[0].replaceChildren(
    ...list.map((x) => {
      const tr = el('tr');
      tr.dataset.id = x.deliveryId;
      tr.append(
        el('td', x.deliveryId),
        el('td', x.eventType ?? ''),
        el('td', x.status, x.status),
        el('td', x.attempts),
        el('td', ago(x.receivedAt)),
        el('td', x.lastError ?? ''),
      );
      tr.addEventListener('click', () => show(x.deliveryId, x.source));
      return tr;
    }),
  );
  $('total').textContent = r.view === 'rows' ? `${list.length} of ${r.total} rows` : '';
}

async function show(id, source) {
  const r = await api(`/api/delivery?${new URLSearchParams({ id, source })}`);
  const d = r.deliveries[0];
  $('delivery').hidden = false;
  $('d-title').textContent = `${d.source} ${d.deliveryId}`;
  const fields = [
    ['type', d.eventType],
    ['status', d.status],
    ['attempts', d.attempts],
    ['received', new Date(d.receivedAt).toISOString()],
    ['last error', d.lastError],
  ];
  $('d-fields').replaceChildren(...fields.flatMap(([k, v]) => [el('dt', k), el('dd', v ?? '—')]));
  $('d-headers').tBodies[0].replaceChildren(
    ...Object.entries(d.headers).map(([k, v]) => {
      const tr = el('tr');
      tr.append(el('td', k), el('td', v));
      return tr;
    }),
  );
  let pretty = d.body?.text ?? '(pruned)';
  try {
    pretty = JSON.stringify(JSON.parse(d.body.text), null, 2);
  } catch {}
  let raw = false;
  const render = () => ($('d-body').textContent = raw ? (d.body?.base64 ?? '') : pretty);
  render();
  $('d-raw').onclick = () => {
    raw = !raw;
    $('d-raw').textContent = raw ? 'pretty' : 'raw bytes';
    render();
  };
  $('d-preview').replaceChildren();
  $('d-requeue').onclick = () => previewRequeue({ ids: [d.deliveryId] }, $('d-preview'));
  for (const id of ['d-editor', 'd-send-edited', 'd-curl-text', 'd-fixture-text']) $(id).hidden = true;
  $('d-sent').textContent = '';
  const said = (r) =>
    ($('d-sent').textContent =
      r.status !== undefined ? `${r.status}${r.said ? `: ${r.said}` : ''} in ${r.ms} ms` : `no answer: ${r.error}`);
  const target = { id: d.deliveryId, source: d.source };
  const sending = () => {
    $('d-sent').textContent = 'sending…';
  };
  $('d-replay').onclick = async () => {
    sending();
    said(await api('/api/replay', { method: 'POST', body: JSON.stringify({ ...target, to: $('d-to').value }) }));
  };
  $('d-edit').onclick = () => {
    $('d-editor').value = d.body?.text ?? '';
    $('d-editor').hidden = false;
    $('d-send-edited').hidden = false;
  };
  $('d-send-edited').onclick = async () => {
    sending();
    said(await api('/api/replay', { method: 'POST', body: JSON.stringify({ ...target, to: $('d-to').value, body: $('d-editor').value }) }));
  };
  $('d-fixture').onclick = async () => {
    const box = $('d-fixture-text');
    box.hidden = false;
    try {
      const r = await api('/api/fixture', { method: 'POST', body: JSON.stringify({ ...target, redact: $('d-redact').checked }) });
      box.textContent = `saved ${r.file}${r.redacted ? ' (redacted)' : ''}\nsend it: ${r.send}`;
    } catch (err) {
      box.textContent = err.message;
    }
  };
  $('d-curl').onclick = async () => {
    const r = await api(`/api/curl?${new URLSearchParams({ ...target, to: $('d-to').value })}`);
    $('d-curl-text').textContent = r.curl;
    $('d-curl-text').hidden = false;
    await navigator.clipboard?.writeText(r.curl).catch(() => undefined);
  };
}

/** Whether the inspector can sign (it was given a secret): the send actions show only then. */
async function signing() {
  const r = await api('/api/signing');
  for (const id of ['d-replay', 'd-edit', 'd-curl', 'd-to']) $(id).hidden = !r.provider;
  $('d-unsigned').hidden = Boolean(r.provider);
}

/** Under listen --ui: the requests refused lately (a bad signature, a stale timestamp, too large) and why. */
let hasRefused = true;
async function refused() {
  if (!hasRefused) return undefined;
  let r;
  try {
    r = await api('/api/refused');
  } catch {
    hasRefused = false; // not under listen: no such list
    return undefined;
  }
  $('refused-box').hidden = false;
  $('refused').tBodies[0].replaceChildren(
    ...r.refused.slice(0, 20).map((x) => {
      const tr = el('tr');
      const why = el('td');
      if (x.kept) {
        const b = el('button', 'why?');
        b.type = 'button';
        b.onclick = () => explainRefused(x.id);
        why.append(b);
      }
      tr.append(el('td', x.id), el('td', ago(x.at)), el('td', x.status), el('td', x.code ? `${x.code}: ${x.reason}` : x.reason), why);
      return tr;
    }),
  );
  return r.perMinute;
}

/** Why one refused request's signature did not hold, as `hookdrill verify` says it, and the command that says it again. */
async function explainRefused(id) {
  $('refused-why').hidden = false;
  $('refused-why-title').textContent = `${id}: judging…`;
  $('refused-why-text').textContent = '';
  try {
    const d = await api(`/api/refused/${encodeURIComponent(id)}`);
    const e = d.explanation;
    $('refused-why-title').textContent = `${id}: ${e.ok ? 'valid' : 'refused'} (${e.code})`;
    $('refused-why-text').textContent = [
      ...e.findings,
      '',
      `again in a terminal: hookdrill verify --ui '${location.href}' --refused ${id} --secret …`,
    ].join('\n');
  } catch (err) {
    $('refused-why-title').textContent = `${id}: ${err.message}`;
  }
}

async function refresh() {
  try {
    const [o, refusedPerMinute] = await Promise.all([overview(), refused(), rows()]);
    chart(o, refusedPerMinute);
    $('updated').textContent = `updated ${new Date().toLocaleTimeString()}`;
  } catch (err) {
    $('updated').textContent = `error: ${err.message}`;
  }
}

// A query per keystroke is a query per keystroke on the inbox listen writes to: typed filters
// wait until the typing stops.
let typing;
$('filters').addEventListener('input', () => {
  clearTimeout(typing);
  typing = setTimeout(() => rows(), FILTER_DEBOUNCE_MS);
});
// Live: new deliveries appear without reloading — 2 s after the last refresh ended, so a slow
// store (an overview of a large BullMQ queue takes seconds) is never asked twice at once; and
// at least four times as long as that refresh took, so an open page keeps the store busy a fifth
// of the time at most (an overview of a million Postgres rows takes about a second of the
// database's CPU: every 2 s, that was a third of a core taken from the receiver).
signing().catch(() => undefined);
async function live() {
  const t0 = performance.now();
  await refresh();
  setTimeout(live, Math.max(2000, 4 * (performance.now() - t0)));
}
live();
