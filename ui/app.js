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
  if (!res.ok) throw Object.assign(new Error(body.error ?? `HTTP ${res.status}`), { answer: body, status: res.status });
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

/** A scale's top: the peak rounded up to 1, 2 or 5 times a power of ten, so the axis reads in round numbers. */
function niceTop(peak) {
  const p = 10 ** Math.floor(Math.log10(Math.max(1, peak)));
  return [1, 2, 5, 10].map((m) => m * p).find((t) => t >= peak) ?? peak;
}

/**
 * Deliveries per minute over the last hour, each bar split by outcome, on a scale from 0 to a
 * round top (the y axis says it), the hour along the x axis; hovering a bar says its counts.
 */
function chart(o, refusedPerMinute) {
  const byOutcome = { ...o.perMinuteByStatus, refused: refusedPerMinute ?? [] };
  const totals = o.perMinute.map((n, i) => n + (byOutcome.refused[i] ?? 0));
  const top = niceTop(Math.max(1, ...totals));
  const shown = OUTCOMES.filter((k) => (byOutcome[k] ?? []).some((n) => n > 0));
  $('chart').replaceChildren(
    ...totals.map((total, i) => {
      const bar = el('div');
      bar.style.height = `${Math.round((total / top) * 100)}%`;
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
  $('y-top').textContent = String(top);
  $('y-mid').textContent = top % 2 === 0 ? String(top / 2) : '';
  $('legend').replaceChildren(...shown.map((k) => el('span', k, k)));
}

const excludeCheck = () => $('exclude-check').checked;

async function overview() {
  const r = await api(`/api/overview${excludeCheck() ? '?check=exclude' : ''}`);
  const o = r.overview;
  $('inbox').textContent = r.inbox;
  const counts = $('counts');
  counts.replaceChildren(...['pending', 'working', 'done', 'dead'].map((s) => el('span', `${s} ${o.stats.counts[s]}`, s)));
  counts.dataset.total = String(o.stats.total);
  $('oldest').textContent = o.stats.oldestPendingAt ? `oldest pending: ${ago(o.stats.oldestPendingAt)}` : 'oldest pending: none';
  dead.patch(o.deadByError);
  retrying.patch(o.retryingByError ?? []);
  $('retrying-box').hidden = retrying.size() === 0;
  $('requeues').replaceChildren(
    ...(o.requeues ?? [])
      .slice(0, 10)
      .map((q) =>
        el(
          'li',
          `${new Date(q.at).toISOString()}: ${q.moved} row${q.moved === 1 ? '' : 's'}${q.selector?.statuses?.includes('pending') ? ' retried now' : ''}${q.resetAttempts ? ', attempts reset' : ''}`,
        ),
      ),
  );
  return o;
}

function fromNow(ms) {
  const s = Math.round((ms - Date.now()) / 1000);
  if (s <= 0) return 'due now';
  if (s < 60) return `in ${s}s`;
  if (s < 3600) return `in ${Math.round(s / 60)}m`;
  return `in ${(s / 3600).toFixed(1)}h`;
}

/** How many of a group `hookdrill check` sent: its deliberate failures are no incident. */
function checkNote(g) {
  if (!g.checkRows) return '';
  return g.checkRows === g.count ? 'all sent by hookdrill check' : `${g.checkRows} sent by hookdrill check`;
}

/**
 * A table of rows grouped by their last error, patched in place: a refresh updates counts and
 * examples but never touches a group's action cell, so a preview or a confirm the user is about
 * to click stays where it is. A group that is gone (requeued) stays a while if its cell says
 * something (the outcome).
 */
function groupTable(id, status, whenOf, verb, emptyText) {
  const groups = new Map();
  // The "(no error recorded)" group is selected as that: an empty error would select every row.
  const button = (g, act) => requeueButton(g.error ? { status, error: g.error } : { status, withoutError: true }, act, verb);
  return {
    size: () => groups.size,
    patch(list) {
      const now = Date.now();
      const seen = new Set();
      const order = [];
      for (const g of list) {
        seen.add(g.error);
        let row = groups.get(g.error);
        if (!row) {
          const tr = el('tr');
          const act = el('td', undefined, 'act');
          act.append(button(g, act));
          const error = el('td', undefined, 'err');
          error.append(el('span', g.error || '(no error recorded)'), el('small', '', 'note'));
          const count = el('td');
          tr.append(count, error, act);
          row = { tr, act, count, note: error.lastChild };
          groups.set(g.error, row);
        }
        row.count.textContent = String(g.count);
        // When it tries next, an example and how many check sent, under the error: the error gets the width.
        row.note.textContent = [whenOf(g), `e.g. ${g.exampleId}`, checkNote(g)].filter(Boolean).join(' · ');
        // An outcome said long enough ago gives the group its button back (more rows died of it since).
        const keep = row.act.dataset.keepUntil;
        if (keep !== undefined && Number(keep) <= now) {
          delete row.act.dataset.keepUntil;
          row.act.replaceChildren(button(g, row.act));
        }
        order.push(row.tr);
      }
      for (const [error, row] of groups) {
        if (seen.has(error)) continue;
        if (Number(row.act.dataset.keepUntil ?? 0) > now) order.push(row.tr);
        else groups.delete(error);
      }
      // No group: said in words, not a table of bare headers.
      if (order.length === 0 && emptyText) {
        const td = el('td', emptyText, 'empty');
        td.colSpan = 3;
        order.push(el('tr'));
        order[0].append(td);
      }
      $(id).tBodies[0].replaceChildren(...order);
    },
  };
}

const dead = groupTable('dead', 'dead', () => '', 'requeue…', 'no dead rows');
const retrying = groupTable('retrying', 'pending', (g) => `next attempt ${fromNow(g.nextAt)}`, 'retry now…');

/** An action's outcome, said where it was asked, kept on screen for a while after its row is gone. */
function outcome(where, text, cls) {
  where.dataset.keepUntil = String(Date.now() + 15_000);
  where.replaceChildren(el('span', text, cls));
}

/** A requeue is previewed (its dry-run count) before it is done, as the CLI's --dry-run. */
async function previewRequeue(given, where, label) {
  // A group's requeue leaves check's rows out when the page does: what it moves is what it shows.
  const selector = given.ids ? given : { ...given, excludeCheck: excludeCheck() };
  const retry = selector.status === 'pending';
  let dry;
  try {
    dry = await api('/api/requeue', { method: 'POST', body: JSON.stringify({ ...selector, dryRun: true }) });
  } catch (err) {
    return outcome(where, `not previewed: ${err.message}`, 'error');
  }
  const rows = `${dry.matched} row${dry.matched === 1 ? '' : 's'}`;
  const confirm = el('button', retry ? `retry ${rows} now` : `requeue ${rows}`);
  confirm.type = 'button';
  confirm.className = 'confirm';
  confirm.addEventListener('click', async () => {
    confirm.disabled = true;
    confirm.textContent = 'requeueing…';
    try {
      const done = await api('/api/requeue', { method: 'POST', body: JSON.stringify(selector) });
      outcome(where, `${retry ? 'due now:' : 'requeued'} ${done.moved} of ${done.matched}`, 'done');
    } catch (err) {
      outcome(where, `not requeued: ${err.message}`, 'error');
    }
    refresh();
  });
  const cancel = el('button', 'cancel');
  cancel.type = 'button';
  cancel.addEventListener('click', () => {
    delete where.dataset.keepUntil;
    where.replaceChildren(requeueButton(given, where, label ?? (retry ? 'retry now…' : 'requeue…')));
  });
  // Kept while it waits for the click, whatever the refreshes say of its group.
  where.dataset.keepUntil = String(Number.MAX_SAFE_INTEGER);
  where.replaceChildren(confirm, cancel);
}

function requeueButton(selector, where, label = 'requeue…') {
  const b = el('button', label);
  b.type = 'button';
  b.addEventListener('click', () => previewRequeue(selector, where, label));
  return b;
}

const FILTER_DEBOUNCE_MS = 300;

function filters() {
  const q = new URLSearchParams();
  for (const [k, v] of new FormData($('filters'))) if (v) q.append(k, String(v));
  return q;
}

/**
 * The list, newest first. A live refresh asks for the newest page and patches it in: rows already
 * shown are updated where they are (a selection stays selected), new ones go on top, and rows
 * pushed down by them stay, followed by any older pages the user loaded. A change of filters
 * starts the list afresh.
 */
const PAGE = 200;
const listed = new Map();
let listedFor;
let olderCursor;
let rowsAsked = 0;
const rowKey = (x) => `${x.source}\n${x.deliveryId}`;

function rowElement(x) {
  let tr = listed.get(rowKey(x));
  if (!tr) {
    tr = el('tr');
    tr.dataset.id = x.deliveryId;
    for (let i = 0; i < 9; i++) tr.append(el('td'));
    tr.cells[0].className = 'id';
    tr.cells[1].className = 'type';
    tr.cells[2].className = 'provider';
    tr.cells[3].className = 'route';
    tr.cells[6].className = 'when';
    tr.cells[7].className = 'when';
    tr.addEventListener('click', () => {
      for (const other of $('rows').querySelectorAll('tr.selected')) other.classList.remove('selected');
      tr.classList.add('selected');
      show(x.deliveryId, x.source);
    });
    listed.set(rowKey(x), tr);
  }
  tr.dataset.receivedAt = String(x.receivedAt);
  const [id, type, provider, route, status, attempts, next, received, error] = tr.cells;
  id.textContent = x.deliveryId;
  // A narrow screen shortens them (…) so status stays in view: whole in the title.
  id.title = x.deliveryId;
  type.textContent = x.eventType ?? '';
  type.title = x.eventType ?? '';
  provider.textContent = x.source;
  // The route listen gave the row (issue 56): a badge; none for a row stored without routes.
  route.replaceChildren(...(x.route !== undefined ? [el('span', x.route, 'badge')] : []));
  route.title = x.route ?? '';
  status.textContent = x.status;
  status.className = x.status;
  attempts.textContent = String(x.attempts);
  // Pending: when it is tried next (a row that failed waits for its retry); working: its lease.
  next.textContent = x.status === 'pending' && x.nextAttemptAt !== undefined ? fromNow(x.nextAttemptAt) : '';
  next.title = x.nextAttemptAt !== undefined ? new Date(x.nextAttemptAt).toISOString() : '';
  received.textContent = ago(x.receivedAt);
  received.title = new Date(x.receivedAt).toISOString();
  error.textContent = x.lastError ?? '';
  error.title = x.lastError ?? '';
  error.className = 'err';
  return tr;
}

function listError(message) {
  listed.clear();
  listedFor = undefined;
  olderCursor = undefined;
  $('rows').tBodies[0].replaceChildren();
  $('older').hidden = true;
  $('total').textContent = message;
  $('total').className = 'error';
}

async function rows() {
  const q = filters();
  const key = q.toString();
  q.set('limit', String(PAGE));
  const asked = ++rowsAsked;
  let r;
  try {
    r = await api(`/api/rows?${q}`);
  } catch (err) {
    // A filter the inbox cannot take (since: banana) empties the list: old rows under a new filter would lie.
    if (asked === rowsAsked) listError(err.message);
    return;
  }
  // An answer to filters the user has since changed is not shown over the newer one.
  if (asked !== rowsAsked) return;
  const page = r.view === 'rows' ? r.rows : [];
  const fresh = key !== listedFor;
  if (fresh) {
    listed.clear();
    olderCursor = r.next;
  }
  const top = page.map(rowElement);
  const inTop = new Set(top);
  // Rows shown before that this page no longer holds: kept if the page is full and they are older
  // than its last (new rows pushed them down), dropped if not (they no longer match the filters).
  const lastAt = r.next && page.length ? page[page.length - 1].receivedAt : Number.NEGATIVE_INFINITY;
  const below = fresh ? [] : [...$('rows').tBodies[0].rows].filter((tr) => !inTop.has(tr) && Number(tr.dataset.receivedAt) <= lastAt);
  const kept = new Set(below);
  for (const [k, tr] of listed) if (!inTop.has(tr) && !kept.has(tr)) listed.delete(k);
  if (!fresh && below.length === 0) olderCursor = r.next;
  listedFor = key;
  $('rows').tBodies[0].replaceChildren(...top, ...below);
  $('older').hidden = !olderCursor;
  total = r.total ?? 0;
  countShown();
  columns(page);
  routeActions();
}

/**
 * The provider and route columns (issue 56), shown once the inbox has rows of several providers or
 * rows listen routed: an inbox of one provider without routes keeps its columns (and its width on
 * a phone). What the rows name is offered in the filters' lists.
 */
const seenProviders = new Set();
const seenRoutes = new Set();
function columns(page) {
  for (const x of page) {
    seenProviders.add(x.source);
    if (x.route !== undefined) seenRoutes.add(x.route);
  }
  $('rows').classList.toggle('providers', seenProviders.size > 1);
  $('rows').classList.toggle('routed', seenRoutes.size > 0);
  const options = (id, names) =>
    $(id).replaceChildren(
      ...[...names].sort().map((n) => {
        const o = el('option');
        o.value = n;
        return o;
      }),
    );
  options('provider-names', seenProviders);
  options('route-names', seenRoutes);
}

/**
 * With a route in the filter: its dead rows requeued in one action, previewed first (how many), as
 * `hookdrill requeue --route NAME --dead` — what to do once the route's service is fixed. Each row
 * keeps its route, so they go back to that service and no other.
 */
let routeShown;
function routeActions() {
  const route = String(new FormData($('filters')).get('route') ?? '').trim();
  $('route-actions').hidden = route === '';
  const where = $('route-requeue');
  // The same route: its button, its confirm or its outcome stays, until the outcome has been said long enough.
  const said = where.dataset.keepUntil;
  if (route === routeShown && !(said !== undefined && Number(said) <= Date.now())) return;
  routeShown = route;
  delete where.dataset.keepUntil;
  where.replaceChildren(...(route ? [requeueButton({ status: 'dead', route }, where, `requeue route ${route}'s dead rows…`)] : []));
}

let total = 0;
function countShown() {
  $('total').className = '';
  $('total').textContent = `${listed.size} of ${total} rows, newest first`;
}

/** The next page back in time, after the last row shown. */
async function older() {
  if (!olderCursor) return;
  const q = filters();
  q.set('limit', String(PAGE));
  q.set('after', olderCursor);
  const key = listedFor;
  $('older').disabled = true;
  try {
    const r = await api(`/api/rows?${q}`);
    if (key !== listedFor || r.view !== 'rows') return;
    const more = r.rows.filter((x) => !listed.has(rowKey(x))).map(rowElement);
    $('rows').tBodies[0].append(...more);
    olderCursor = r.next;
    $('older').hidden = !olderCursor;
    total = r.total;
    countShown();
  } catch (err) {
    $('total').textContent = `older rows: ${err.message}`;
    $('total').className = 'error';
  } finally {
    $('older').disabled = false;
  }
}
$('older').addEventListener('click', older);

async function show(id, source) {
  let r;
  try {
    r = await api(`/api/delivery?${new URLSearchParams({ id, source })}`);
  } catch (err) {
    $('total').textContent = `${id}: ${err.message}`;
    $('total').className = 'error';
    return;
  }
  const d = r.deliveries[0];
  $('delivery').hidden = false;
  $('d-title').textContent = `${d.source} ${d.deliveryId}`;
  const fields = [
    ['type', d.eventType],
    ...(d.route !== undefined ? [['route', d.route]] : []),
    ['status', d.status],
    ['attempts', d.attempts],
    ['received', new Date(d.receivedAt).toISOString()],
    ...(d.status === 'pending' && d.nextAttemptAt !== undefined
      ? [['next attempt', `${fromNow(d.nextAttemptAt)} (${new Date(d.nextAttemptAt).toISOString()})`]]
      : []),
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
  let json = false;
  try {
    pretty = JSON.stringify(JSON.parse(d.body.text), null, 2);
    json = true;
  } catch {}
  let raw = false;
  const render = () => {
    if (raw) $('d-body').textContent = d.body?.base64 ?? '';
    else if (json) highlight($('d-body'), pretty);
    else $('d-body').textContent = pretty;
  };
  render();
  $('d-raw').onclick = () => {
    raw = !raw;
    $('d-raw').textContent = raw ? 'pretty' : 'raw bytes';
    render();
  };
  $('d-preview').replaceChildren();
  // Dead or done: back to pending; pending: tried now instead of at its next attempt; working: its worker's.
  const pending = d.status === 'pending';
  $('d-requeue').textContent = pending ? 'Retry now…' : 'Requeue…';
  $('d-requeue').disabled = d.status === 'working';
  $('d-requeue').title = d.status === 'working' ? 'a worker holds it (its lease); it is left to that worker' : '';
  $('d-requeue').onclick = () =>
    previewRequeue(pending ? { ids: [d.deliveryId], status: 'pending' } : { ids: [d.deliveryId] }, $('d-preview'));
  for (const id of ['d-editor', 'd-send-edited', 'd-curl-text', 'd-fixture-text']) $(id).hidden = true;
  $('d-sent').textContent = '';
  const said = (r) =>
    ($('d-sent').textContent =
      r.status !== undefined ? `${r.status}${r.said ? `: ${r.said}` : ''} in ${r.ms} ms` : `no answer: ${r.error}`);
  const target = { id: d.deliveryId, source: d.source };
  // Every send ends in words where it was asked: an answer, no answer, or why it was not sent.
  // Replay and the signed curl are both signed for a URL: without one, both refuse in the same words.
  const targetUrl = () => {
    const to = $('d-to').value.trim();
    if (!to) {
      $('d-sent').textContent = 'give the URL to replay to (http://127.0.0.1:3000/webhooks)';
      $('d-to').focus();
    }
    return to;
  };
  const replay = async (extra) => {
    const to = targetUrl();
    if (!to) return;
    $('d-sent').textContent = 'sending…';
    try {
      said(await api('/api/replay', { method: 'POST', body: JSON.stringify({ ...target, to, ...extra }) }));
    } catch (err) {
      $('d-sent').textContent = `not sent: ${err.message}`;
    }
  };
  $('d-replay').onclick = () => replay({});
  $('d-edit').onclick = () => {
    // Pretty-printed to edit; the edited text is what is sent (signed afresh), byte for byte.
    $('d-editor').value = d.body ? pretty : '';
    $('d-editor').hidden = false;
    $('d-send-edited').hidden = false;
  };
  $('d-send-edited').onclick = () => replay({ body: $('d-editor').value });
  const saveFixture = async (force) => {
    const box = $('d-fixture-text');
    box.hidden = false;
    box.replaceChildren();
    try {
      const r = await api('/api/fixture', { method: 'POST', body: JSON.stringify({ ...target, redact: $('d-redact').checked, force }) });
      box.textContent = `saved ${r.file}${r.redacted ? ' (redacted)' : ''}\nsend it: ${r.send}`;
    } catch (err) {
      box.textContent = `${err.message} `;
      if (err.answer?.exists) {
        const replace = el('button', 'replace it');
        replace.type = 'button';
        replace.addEventListener('click', () => saveFixture(true));
        box.append(replace);
      }
    }
  };
  $('d-fixture').onclick = () => saveFixture(false);
  $('d-curl').onclick = async () => {
    const to = targetUrl();
    $('d-curl-text').hidden = !to;
    if (!to) return;
    $('d-sent').textContent = '';
    try {
      const r = await api(`/api/curl?${new URLSearchParams({ ...target, to })}`);
      $('d-curl-text').textContent = r.curl;
      await navigator.clipboard?.writeText(r.curl).catch(() => undefined);
    } catch (err) {
      $('d-curl-text').textContent = err.message;
    }
  };
  // The delivery opens below the list: brought into view, or the click seems to do nothing.
  $('delivery').scrollIntoView({ block: 'start' });
}

/** Past this, a body is shown without colours: a span per token of a 30 MiB body would stall the page. */
const HIGHLIGHT_MAX = 256 * 1024;
const TOKEN = /("(?:[^"\\]|\\.)*")(\s*:)?|\b(?:true|false|null)\b|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

/** Pretty JSON with keys, strings, numbers and literals in colour: every piece set as text, never markup. */
function highlight(pre, text) {
  if (text.length > HIGHLIGHT_MAX) {
    pre.textContent = text;
    return;
  }
  const parts = [];
  let last = 0;
  for (const m of text.matchAll(TOKEN)) {
    if (m.index > last) parts.push(document.createTextNode(text.slice(last, m.index)));
    if (m[1] !== undefined) {
      parts.push(el('span', m[1], m[2] ? 'j-key' : 'j-str'));
      if (m[2]) parts.push(document.createTextNode(m[2]));
    } else parts.push(el('span', m[0], /^[tfn]/.test(m[0]) ? 'j-lit' : 'j-num'));
    last = m.index + m[0].length;
  }
  parts.push(document.createTextNode(text.slice(last)));
  pre.replaceChildren(...parts);
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
      // The token in the environment, not in argv: a command line is every local user's to read.
      `again in a terminal: HOOKDRILL_UI_TOKEN='${token}' hookdrill verify --ui '${location.origin}/' --refused ${id} --secret-env YOUR_SECRET_VARIABLE`,
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
// Leaving check's rows out changes the groups at once, not at the next refresh.
$('exclude-check').addEventListener('change', () => refresh());
async function live() {
  const t0 = performance.now();
  await refresh();
  setTimeout(live, Math.max(2000, 4 * (performance.now() - t0)));
}
live();
