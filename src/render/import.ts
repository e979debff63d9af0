import type { ImportResult } from '../fixtures/import/run.js';
import { escapeStrings } from '../util/terminal.js';
import { count } from '../util/words.js';

/**
 * What `import` did: the captures skipped and why, then the counts. Where a capture was and why it
 * was skipped quote the file (a header's name, an id): escaped first, so a capture cannot print a
 * line of its own.
 */
export function renderImport(result: ImportResult): string {
  const r = escapeStrings(result);
  const lines = r.skipped.slice(0, 20).map((s) => `skipped ${s.where}: ${s.why}`);
  if (r.skipped.length > 20) lines.push(`… and ${count(r.skipped.length - 20, 'more skipped')}`);
  if (r.interrupted)
    lines.push(
      `interrupted after ${count(r.interrupted.done, 'capture')} of ${r.read.toLocaleString('en-US')}: each batch before it written whole, nothing after; run it again to import the rest (what is there is a duplicate)`,
    );
  lines.push(
    `imported into ${r.inbox}: ${count(r.read, 'read', 'read')} · ${r.stored.toLocaleString('en-US')} stored (pending) · ${r.duplicates.toLocaleString('en-US')} already there · ${r.skipped.length.toLocaleString('en-US')} skipped`,
  );
  if (!r.interrupted && r.stored + r.duplicates === 0)
    lines.push(
      r.read === 0
        ? 'nothing imported: the files hold no capture (HAR: no POST with a body)'
        : 'nothing imported: every capture was skipped',
    );
  return `${lines.join('\n')}\n`;
}
