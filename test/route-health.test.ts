import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_ROUTE_BACKOFF, RouteHealth, routePauseMs } from '../src/worker/route-health.js';
import { routeLine } from '../src/render/listen.js';

test('a route pause grows with consecutive failures, with jitter, to its cap', () => {
  const low = () => 0;
  const high = () => 0.999999;
  assert.equal(routePauseMs(1, DEFAULT_ROUTE_BACKOFF, low), 500);
  assert.equal(routePauseMs(2, DEFAULT_ROUTE_BACKOFF, low), 1_000);
  assert.equal(routePauseMs(3, DEFAULT_ROUTE_BACKOFF, high), 4_000);
  assert.equal(routePauseMs(50, DEFAULT_ROUTE_BACKOFF, high), 60_000);
});

test('a new route takes one forward at a time until answered; then as many as it needs', () => {
  const h = new RouteHealth(DEFAULT_ROUTE_BACKOFF, () => 0);
  assert.equal(h.admit('ci', 0), true);
  assert.equal(h.admit('ci', 0), false);
  assert.deepEqual(h.closed(0), ['ci']);
  assert.equal(h.ended('ci', 'github', { ok: true }, 10), undefined);
  assert.equal(h.state('ci', 10), 'healthy');
  assert.equal(h.admit('ci', 10) && h.admit('ci', 10) && h.admit('ci', 10), true);
  assert.deepEqual(h.closed(10), []);
});

test('a failure pauses the route; its pause runs out into one probe; a success resumes it and resets the count', () => {
  const h = new RouteHealth(DEFAULT_ROUTE_BACKOFF, () => 0);
  h.admit('ci', 0);
  const paused = h.ended('ci', 'github', { ok: false, error: 'forward timeout' }, 1_000);
  assert.deepEqual(paused, { route: 'ci', source: 'github', state: 'paused', forMs: 500, failures: 1, error: 'forward timeout' });
  assert.equal(h.state('ci', 1_499), 'paused');
  assert.equal(h.admit('ci', 1_499), false);
  assert.equal(h.waitMs('ci', 1_200), 300);
  assert.equal(h.state('ci', 1_500), 'probing');
  assert.equal(h.admit('ci', 1_500), true);
  assert.equal(h.admit('ci', 1_500), false, 'one probe at a time');
  assert.equal(h.ended('ci', 'github', { ok: false, error: '503' }, 2_000)?.state, 'paused');
  assert.equal(h.waitMs('ci', 2_000), 1_000, 'the second failure in a row pauses twice as long');
  assert.equal(h.admit('ci', 3_000), true);
  assert.deepEqual(h.ended('ci', 'github', { ok: true }, 3_100), { route: 'ci', source: 'github', state: 'resumed', failures: 2 });
  assert.equal(h.state('ci', 3_100), 'healthy');
});

test("a row's own fault says nothing of its route's target; forwards that fail together pause once", () => {
  const h = new RouteHealth(DEFAULT_ROUTE_BACKOFF, () => 0);
  h.admit('ci', 0);
  h.ended('ci', 'github', { ok: true }, 0);
  for (let i = 0; i < 3; i++) h.admit('ci', 0);
  assert.equal(h.ended('ci', 'github', undefined, 1), undefined);
  assert.equal(h.state('ci', 1), 'healthy');
  assert.equal(h.ended('ci', 'github', { ok: false, error: 'ECONNREFUSED' }, 2)?.state, 'paused');
  assert.equal(h.ended('ci', 'github', { ok: false, error: 'ECONNREFUSED' }, 3), undefined);
  assert.equal(h.waitMs('ci', 2), 500);
});

test("listen's line for a route paused or resumed is one line, the target's words escaped", () => {
  const hostile = 'forward target answered 503: \u001b]8;;http://evil\u0007click\u001b]8;;\u0007\nfake line';
  for (const json of [false, true]) {
    const line = routeLine({ route: 'ci', source: 'github', state: 'paused', forMs: 1_500, failures: 2, error: hostile }, json);
    assert.equal(line.includes('\n'), false);
    assert.equal(line.includes('\u001b]8'), false);
    assert.equal(line.includes('\u0007'), false);
  }
  assert.match(
    routeLine({ route: 'ci', source: 'github', state: 'paused', forMs: 1_500, failures: 2, error: 'ECONNREFUSED' }, false),
    /route paused.*ci \(github\) for 1\.5 ?s, failure 2 in a row.*ECONNREFUSED/,
  );
  assert.match(
    routeLine({ route: 'ci', source: 'github', state: 'resumed', failures: 3 }, false),
    /route resumed.*ci \(github\).*3 failed forwards/,
  );
});
