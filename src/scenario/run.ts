import { asSent } from '../providers/body-placed.js';
import { exec } from 'node:child_process';
import { stringsOption } from '../util/shapes.js';
import type { Strings } from '../util/shapes.js';
import { isDeepStrictEqual } from 'node:util';
import { parseDuration } from '../util/duration.js';
import { UsageError } from '../util/errors.js';
import { compileFixture, resolveFixtures } from '../fixtures/index.js';
import type { FieldOverride } from '../fixtures/index.js';
import { displayUrl, parseUrl } from '../util/options.js';
import { randomAlnum } from '../providers/util.js';
import type { JsonValue } from '../providers/types.js';
import { fill, loadScenario } from './load.js';
import { maskSecrets } from '../util/secrets.js';
import { resolveSigner } from '../delivery/signer.js';
import { shuffle } from '../delivery/run.js';
import { sleep } from '../util/wait.js';

export const ORDERS = ['in-order', 'reversed', 'shuffled', 'late'] as const;
export type Order = (typeof ORDERS)[number];

export interface ScenarioOptions {
  scenario: string;
  url?: string;
  secrets?: Strings;
  /** Which orderings to play (default all four). */
  orders?: Strings;
  /** A shell command printing the receiver's state as JSON (HOOKDRILL_VAR_<NAME> names the run's ids). */
  state?: string;
  /** How long after the last delivery the state is read (default 2 s): a worker may apply events after the 200. */
  settle?: string;
  /** With late: how long the late event waits after the others (default 1 s). */
  late?: string;
  seed?: number;
}

export interface OrderingReport {
  order: Order;
  /** The events, as sent. */
  sequence: string[];
  answers: number[];
  vars: Record<string, string | number>;
  expected: JsonValue;
  state?: JsonValue;
  ok: boolean;
  problem?: string;
}

export interface ScenarioResult {
  command: 'scenario';
  ok: boolean;
  scenario: string;
  description: string;
  provider: string;
  url: string;
  seed: number;
  orderings: OrderingReport[];
  elapsedMs: number;
}

/**
 * Play a scenario's events in several orders — as the provider sends them, reversed, shuffled, and
 * with the first one late — each time with fresh ids, and after each compare the receiver's state
 * (--state) with the state the scenario expects: "our handler assumes Stripe's order" fails here.
 */
export async function run(o: ScenarioOptions): Promise<ScenarioResult> {
  const started = performance.now();
  const scenario = loadScenario(o.scenario);
  const url = parseUrl(o.url, '--url');
  const { provider, secrets } = resolveSigner({ provider: scenario.provider, secrets: stringsOption(o.secrets, 'secrets') ?? [] });
  if (!o.state) throw new UsageError("--state is required: a command that prints the receiver's state as JSON");
  const orders = (stringsOption(o.orders, 'orders') ?? ORDERS).map((x) => {
    if (!(ORDERS as readonly string[]).includes(x)) throw new UsageError(`--orders ${x}: expected some of ${ORDERS.join(', ')}`);
    return x as Order;
  });
  // No ordering played would compare nothing, and nothing compared must never be a pass.
  if (orders.length === 0) throw new UsageError(`--orders names no ordering (${ORDERS.join(', ')})`);
  if (o.seed !== undefined && !Number.isInteger(o.seed)) throw new UsageError(`--seed ${o.seed}: a whole number`);
  const settleMs = o.settle !== undefined ? parseDuration(o.settle, '--settle') : 2_000;
  const lateMs = o.late !== undefined ? parseDuration(o.late, '--late') : 1_000;
  const seed = o.seed ?? Math.floor(Math.random() * 2 ** 31);
  const fixtures = scenario.events.map((e) => resolveFixtures([e.fixture], provider.name)[0]!);
  const timeoutMs = (provider.profiles[provider.defaultProfile] as { timeoutMs: number }).timeoutMs;
  const mask = (text: string) => maskSecrets(text, secrets);

  const orderings: OrderingReport[] = [];
  for (const [k, order] of orders.entries()) {
    const vars = freshVars(scenario.vars);
    const expected = fill(scenario.expect, vars);
    const n = scenario.events.length;
    const story = [...scenario.events.keys()];
    const sequence =
      order === 'in-order'
        ? story
        : order === 'reversed'
          ? [...story].reverse()
          : order === 'late'
            ? [...story.slice(1), 0]
            : shuffled(story, seed + k);
    // Event times follow the story, a second apart, whatever order they are sent in: a receiver
    // that orders by them (Stripe's created, GitHub's updated_at) can get it right.
    const base = Date.now() - n * 1_000;
    const events = scenario.events.map((e, i) => {
      const overrides: FieldOverride[] = Object.entries(e.set).map(([path, value]) => ({
        path: path.split('.'),
        value: fill(value, vars),
        text: path,
      }));
      return compileFixture(provider, fixtures[i]!, overrides).make(base + i * 1_000);
    });
    const report: OrderingReport = {
      order,
      sequence: sequence.map((i) => events[i]!.eventType ?? scenario.events[i]!.fixture),
      answers: [],
      vars,
      expected,
      ok: false,
    };
    orderings.push(report);
    // Before anything is sent, the state for this run's fresh ids cannot be the expected one: if it
    // is, --state does not read the receiver's state for these ids, and every ordering would pass.
    const before = await readState(o.state, vars).catch(() => undefined);
    if (before !== undefined && isDeepStrictEqual(before, expected)) {
      throw new UsageError(
        `--state already prints the expected state before anything was sent (${mask(JSON.stringify(before))}): it must read the receiver's state for the ids in HOOKDRILL_VAR_*`,
      );
    }
    for (const [step, i] of sequence.entries()) {
      if (order === 'late' && step === n - 1) await sleep(lateMs);
      const ev = events[i]!;
      const headers = provider.sign(ev.rawBody, secrets, {
        nowMs: Date.now(),
        deliveryId: ev.deliveryId,
        eventType: ev.eventType,
        facts: ev.facts,
      });
      let status: number;
      try {
        const sent = asSent(provider, ev.rawBody, headers);
        const res = await fetch(url, { method: 'POST', body: sent.body, headers: sent.headers, signal: AbortSignal.timeout(timeoutMs) });
        await res.arrayBuffer();
        status = res.status;
      } catch (err) {
        status = 0;
        report.problem = `${report.sequence[step]} got no answer: ${(err as Error).message}`;
      }
      report.answers.push(status);
      if (status < 200 || status >= 300) {
        report.problem ??= `${report.sequence[step]} was answered ${status}, not 2xx`;
        break;
      }
    }
    if (report.problem) continue;
    // The state may lag the answers (a worker applies events after the 200), and may pass through
    // the expected state on its way to a wrong one: it is judged as it stands once --settle is over.
    await sleep(settleMs);
    try {
      report.state = await readState(o.state, vars);
      report.ok = isDeepStrictEqual(report.state, expected);
      if (!report.ok) report.problem = `ended in ${JSON.stringify(report.state)}, expected ${JSON.stringify(expected)}`;
    } catch (err) {
      report.problem = mask((err as Error).message);
    }
  }
  return {
    command: 'scenario',
    ok: orderings.length > 0 && orderings.every((r) => r.ok),
    scenario: scenario.name,
    description: scenario.description,
    provider: provider.name,
    url: displayUrl(url),
    seed,
    orderings,
    elapsedMs: Math.round(performance.now() - started),
  };
}

function freshVars(spec: Record<string, string>): Record<string, string | number> {
  return Object.fromEntries(
    Object.entries(spec).map(([name, kind]) => [
      name,
      kind === 'int' ? 100_000 + Math.floor(Math.random() * 900_000) : kind.replace('*', randomAlnum(14)),
    ]),
  );
}

function shuffled(items: number[], seed: number): number[] {
  const out = [...items];
  shuffle(out, seed);
  return out;
}

function readState(command: string, vars: Record<string, string | number>): Promise<JsonValue> {
  const env: Record<string, string> = { HOOKDRILL_VARS: JSON.stringify(vars) };
  for (const [name, value] of Object.entries(vars)) env[`HOOKDRILL_VAR_${name.toUpperCase()}`] = String(value);
  return new Promise((resolve, reject) => {
    exec(command, { env: { ...process.env, ...env }, timeout: 30_000 }, (err, stdout, stderr) => {
      if (err)
        return reject(
          new UsageError(`--state command failed (${err.code ?? err.signal}): ${String(stderr).trim().split('\n').slice(-1)[0] ?? ''}`),
        );
      try {
        resolve(JSON.parse(String(stdout)) as JsonValue);
      } catch {
        reject(new UsageError(`--state command printed no JSON: ${JSON.stringify(String(stdout).slice(0, 200))}`));
      }
    });
  });
}
