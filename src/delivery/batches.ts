import { eventsOf, fieldOf, serialized, withList } from '../providers/contract.js';
import type { Provider } from '../providers/index.js';
import type { JsonValue } from '../providers/types.js';
import type { EventFactory, Fixture, PreparedEvent } from '../fixtures/index.js';
import { UsageError } from '../util/errors.js';
import type { EventSource } from './run.js';

/**
 * Events grouped into bodies as the provider batches them (its contract's batching): LINE,
 * SendGrid and HubSpot put several events in one request, so `send` does too. Each fixture use is
 * a unit — a shipped fixture one event, a captured batch all of its events — and units fill a body
 * up to the batch size, a captured batch never split (it goes out as it was captured).
 */
export interface BatchPlan {
  source: EventSource;
  /** Requests in all. */
  bodies: number;
  /** Events in all. */
  events: number;
}

/** The batch size to use: --batch where given (checked against the provider's own most), else the contract's typical one. */
export function batchSizeOption(provider: Provider, value: unknown): number {
  const b = provider.contract.batching;
  if (b.events === 'one') {
    if (value === undefined) return 1;
    throw new UsageError(`--batch: ${provider.title} sends one event a request (${b.source})`);
  }
  if (value === undefined) return b.typical;
  const text = String(value).trim();
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(n) || n < 1 || n > b.max)
    throw new UsageError(
      `--batch ${String(value)}: expected 1 to ${b.max}, the most events ${provider.title} puts in one body (${b.source})`,
    );
  return n;
}

export function planBatches(
  provider: Provider,
  factories: readonly EventFactory[],
  fixtures: readonly Fixture[],
  uses: number,
  size: number,
): BatchPlan {
  const c = provider.contract;
  // How many events each fixture's body holds (a captured batch: several; an empty Verify: none).
  const per = fixtures.map((f) => Math.max(1, eventsOf(c, f.body).length));
  const unitOf = (seq: number) => seq % fixtures.length;
  // Where each body's units start: arithmetic when every unit is one event, else filled greedily.
  let starts: number[] | undefined;
  let bodies: number;
  let events = 0;
  if (per.every((n) => n === 1)) {
    bodies = Math.ceil(uses / size);
    events = uses;
  } else {
    starts = [];
    let inBody = size;
    for (let seq = 0; seq < uses; seq++) {
      const n = per[unitOf(seq)] as number;
      events += n;
      if (inBody + n > size) {
        starts.push(seq);
        inBody = 0;
      }
      inBody += n;
    }
    bodies = starts.length;
  }
  const range = (body: number): [number, number] =>
    starts
      ? [starts[body] as number, body + 1 < starts.length ? (starts[body + 1] as number) : uses]
      : [body * size, Math.min(uses, (body + 1) * size)];

  return {
    bodies,
    events,
    source: {
      make(body) {
        const [from, to] = range(body);
        const made: PreparedEvent[] = [];
        for (let seq = from; seq < to; seq++) made.push((factories[unitOf(seq)] as EventFactory).make(Date.now()));
        if (made.length > 1) return merged(provider, made);
        // One use of a captured batch goes out byte for byte; its label says what it holds.
        const only = made[0] as PreparedEvent;
        return per[unitOf(from)] === 1 ? only : { ...only, eventType: typesOf(provider, [only]) };
      },
      label(body) {
        const [from, to] = range(body);
        const names = [...new Set(Array.from({ length: to - from }, (_, i) => (fixtures[unitOf(from + i)] as Fixture).name))];
        return names.length <= 3 ? names.join(', ') : `${names.slice(0, 3).join(', ')} +${names.length - 3} more`;
      },
    },
  };
}

/** Several made events as one body: the first's envelope around all their events, each keeping its own id. */
function merged(provider: Provider, made: readonly PreparedEvent[]): PreparedEvent {
  const c = provider.contract;
  const path = c.batching.events === 'list' ? c.batching.path : [];
  const join = (bodies: readonly Buffer[]): Buffer => {
    const parsed = bodies.map((b) => JSON.parse(b.toString('utf8')) as JsonValue);
    const all = parsed.flatMap((p) => eventsOf(c, p));
    return Buffer.from(serialized(provider, withList(parsed[0], path, all)));
  };
  const first = made[0] as PreparedEvent;
  const aged = made.every((e) => e.aged) ? (ms: number) => join(made.map((e) => (e.aged as (ms: number) => Buffer)(ms))) : undefined;
  return {
    ...first,
    rawBody: join(made.map((e) => e.rawBody)),
    eventType: typesOf(provider, made),
    aged,
  };
}

/** What a body holds, for its line: its events' types and how many ("delivered, open (5 events)"). */
function typesOf(provider: Provider, made: readonly PreparedEvent[]): string {
  const c = provider.contract;
  const events = made.flatMap((e) => eventsOf(c, JSON.parse(e.rawBody.toString('utf8')) as JsonValue));
  const typePath = c.batching.events === 'list' ? c.batching.type : [];
  const types = [...new Set(events.map((e) => fieldOf(e, typePath) ?? '?'))];
  const shown = types.length <= 3 ? types.join(', ') : `${types.slice(0, 3).join(', ')} +${types.length - 3} more`;
  return `${shown} (${events.length} events)`;
}
