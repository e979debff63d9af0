import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { BIN } from './helpers/cli.js';
import { stripeRow } from './helpers/rows.js';
import { tempDir } from './helpers/tmp.js';

const run = promisify(execFile);

/** hookdrill at a real terminal (a pseudo-terminal from util-linux's script), its output as the terminal got it. */
async function atTerminal(args: string[], env: Record<string, string>): Promise<string> {
  const line = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  const { stdout } = await run('script', ['-qec', line, '/dev/null'], {
    env: { PATH: process.env.PATH ?? '', TERM: 'xterm-256color', ...env },
  });
  return stdout;
}

test('NO_COLOR=1 turns colour off at a terminal (no-color.org); without it, the same command is in colour there', async () => {
  const file = join(tempDir(), 'inbox.db');
  const inbox = openSqliteInbox(file);
  await inbox.put(stripeRow('evt_1'));
  await inbox.close();
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a colour code is what is looked for
  const sgr = /\u001b\[[0-9;]*m/;
  assert.match(await atTerminal(['inspect', '--inbox', file], {}), sgr, 'colour at a terminal by default (else this test proves nothing)');
  const plain = await atTerminal(['inspect', '--inbox', file], { NO_COLOR: '1' });
  assert.match(plain, /pending 1/);
  assert.doesNotMatch(plain, sgr);
  // "Present and not empty": NO_COLOR= (empty) leaves colour on.
  assert.match(await atTerminal(['inspect', '--inbox', file], { NO_COLOR: '' }), sgr);
});

test("listen's status line at an 80-column terminal stays within 79 columns once requests are refused, so each redraw replaces the last", async () => {
  const { freePort } = await import('./helpers/ports.js');
  const port = await freePort();
  const secret = `whsec_${Buffer.from('shell-conventions-secret-0').toString('base64')}`;
  const inbox = join(tempDir(), 'inbox.db');
  const line = [process.execPath, BIN, 'listen', '--provider', 'stripe', '--secret', secret, '--port', String(port), '--inbox', inbox]
    .map((a) => `'${a}'`)
    .join(' ');
  const { spawn } = await import('node:child_process');
  // A pseudo-terminal 80 columns wide, as a laptop's default terminal is.
  const child = spawn('script', ['-qec', `stty cols 80 rows 24; exec ${line}`, '/dev/null'], {
    env: { PATH: process.env.PATH ?? '', TERM: 'xterm-256color', NO_COLOR: '1' },
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  try {
    const { until } = await import('./helpers/until.js');
    await until(() => /listening|127\.0\.0\.1/.test(out), 'listen started', 15_000);
    // Unsigned, forged and oversized requests: every counter the status line has, in use.
    for (let i = 0; i < 30; i++) {
      await fetch(`http://127.0.0.1:${port}/webhooks`, {
        method: 'POST',
        body: '{}',
        headers: { 'stripe-signature': i % 2 ? 't=1,v1=00' : '' },
      }).catch(() => undefined);
    }
    await new Promise((r) => setTimeout(r, 2_500));
    // The redrawn line: what follows each \r (printed lines above it may wrap; a redraw must not).
    const drawn = out
      .split('\n')
      .flatMap((l) => l.split('\r').slice(1))
      // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal codes take no columns
      .map((l) => l.replace(/\u001b\[[0-9;]*[A-Za-z]/g, ''))
      .filter(Boolean);
    const status = drawn.filter((l) => /refused|rejected|unsigned|bad signature/.test(l));
    assert.ok(status.length > 0, `a status line with the refusals was drawn: ${JSON.stringify(drawn.slice(-5))}`);
    const wide = drawn.filter((l) => [...l].length > 79);
    assert.deepEqual(wide, [], 'no redraw wider than 79 columns');
  } finally {
    child.kill('SIGTERM');
  }
});
