import { mkdtempSync, rmSync } from 'node:fs';
import { UsageError } from '../util/errors.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DemoWorld, ackVsStore, inlineVsQueue, startCrm, verifyOrder } from './scenarios.js';
import type { AckVsStore, InlineVsQueue, VerifyOrder } from './scenarios.js';
import { run as send } from '../delivery/send.js';

export interface DemoResult {
  command: 'demo';
  /** True when every figure shows what the demo is about; false means hookdrill itself misbehaved. */
  ok: boolean;
  elapsedMs: number;
  inlineVsQueue: InlineVsQueue;
  ackVsStore: AckVsStore;
  verifyOrder: VerifyOrder;
  /** What did not come out as expected (empty when ok). */
  surprises: string[];
}

/**
 * Three side-by-side runs with real child processes, real HTTP and real SQLite in a temporary
 * directory (removed afterwards). Every figure is measured in the run.
 */
const running = new Set<{ world: DemoWorld; dir: string }>();

/** Kill every demo receiver and remove every demo directory, now (for a signal handler). */
export function abortDemos(): void {
  for (const r of running) {
    r.world.killAll();
    rmSync(r.dir, { recursive: true, force: true });
  }
  running.clear();
}

/** One contrast's figures, by its number in the demo. */
export type DemoSection = { n: 1; figures: InlineVsQueue } | { n: 2; figures: AckVsStore } | { n: 3; figures: VerifyOrder };

export interface DemoOptions {
  /** Each contrast as soon as it is measured (the CLI prints it then: the demo shows itself as it goes). */
  onSection?: (section: DemoSection) => void;
}

export async function run(o: DemoOptions = {}): Promise<DemoResult> {
  const started = performance.now();
  let dir: string;
  try {
    dir = mkdtempSync(join(tmpdir(), 'hookdrill-demo-'));
  } catch (err) {
    throw new UsageError(
      `cannot make a temporary directory in ${tmpdir()} (set TMPDIR to a writable directory): ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    );
  }
  const world = new DemoWorld(dir, await startCrm(), send);
  const entry = { world, dir };
  running.add(entry);
  try {
    const a = await inlineVsQueue(world);
    o.onSection?.({ n: 1, figures: a });
    const b = await ackVsStore(world);
    o.onSection?.({ n: 2, figures: b });
    const c = await verifyOrder(world);
    o.onSection?.({ n: 3, figures: c });
    const surprises: string[] = [];
    if (!(a.inline.attempts > 1 && a.inline.crmUpdates > 1)) surprises.push('inline processing was not retried into duplicate CRM updates');
    if (!(a.queueFirst.attempts === 1 && a.queueFirst.crmUpdates === 1 && a.queueFirst.doneAfterWorker === 1)) {
      surprises.push('queue-first did not take exactly one attempt and one CRM update');
    }
    if (b.storeFirst.processed !== b.storeFirst.acknowledged) surprises.push('store-first lost an acknowledged event');
    if (b.ackFirst.processed >= b.ackFirst.acknowledged) surprises.push('ack-first lost nothing (the kill came too late)');
    if (c.verifyThenStore.rows !== 0) surprises.push('verify-then-store stored unsigned requests');
    return {
      command: 'demo',
      ok: surprises.length === 0,
      elapsedMs: Math.round(performance.now() - started),
      inlineVsQueue: a,
      ackVsStore: b,
      verifyOrder: c,
      surprises,
    };
  } finally {
    running.delete(entry);
    await world.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
