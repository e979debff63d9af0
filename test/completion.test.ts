import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { candidates } from '../src/cli/completion.js';
import { BIN } from './helpers/cli.js';
import { tempDir } from './helpers/tmp.js';

const names = async () => ['stripe/invoice.paid', 'stripe/customer.subscription.trial_will_end', 'github/pull_request.opened'];

test('completion candidates: commands, subcommands, flags, flag values and fixture names, from the command definitions', async () => {
  assert.deepEqual(await candidates(['ch'], names), ['chaos', 'check']);
  assert.deepEqual(await candidates(['send', '--no-r'], names), ['--no-retry']);
  assert.deepEqual(await candidates(['send', '--provider', 'st'], names), ['stripe', 'standard']);
  assert.deepEqual(await candidates(['chaos', '--kill-point', ''], names), ['after-ack', 'random']);
  assert.deepEqual(await candidates(['send', 'stripe/cu'], names), ['stripe/customer.subscription.trial_will_end']);
  assert.deepEqual(await candidates(['fixtures', 'sh'], names), ['show', 'shopify']);
  assert.deepEqual(await candidates(['fixtures', 'show', 'github/'], names), ['github/pull_request.opened']);
  assert.deepEqual(await candidates(['send', '--url', ''], names), [], 'a URL is the user’s to type');
});

test('the bash script completes a catalogue name through hookdrill __complete, as a shell would', () => {
  const bin = join(tempDir(), 'bin');
  mkdirSync(bin);
  symlinkSync(BIN, join(bin, 'hookdrill'));
  // bash's own expansion of the reply array, written so that it is not read as a template placeholder.
  const reply = ['"$', '{COMPREPLY[@]}"'].join('');
  const script = `eval "$(hookdrill completion bash)"; COMP_WORDS=(hookdrill send stripe/customer.subscription.trial_w); COMP_CWORD=2; _hookdrill; printf "%s\\n" ${reply}`;
  const out = execFileSync('bash', ['-c', script], { env: { ...process.env, PATH: `${bin}:${process.env.PATH}` }, encoding: 'utf8' });
  assert.equal(out, 'stripe/customer.subscription.trial_will_end\n');
});

test('the bash script works where hookdrill is not on PATH (a project install), and completes `npx hookdrill …` too', () => {
  // Made by the install itself (node_modules/.bin is not on a shell's PATH): it calls that install by path.
  const script = execFileSync(process.execPath, [BIN, 'completion', 'bash'], { encoding: 'utf8' });
  const reply = ['"$', '{COMPREPLY[@]}"'].join('');
  const complete = (words: string[], cword: number) =>
    execFileSync(
      'bash',
      ['-c', `${script}\nCOMP_WORDS=(${words.join(' ')}); COMP_CWORD=${cword}; _hookdrill; printf "%s\\n" ${reply}`],
      // A PATH with bash and the basics, and no hookdrill on it.
      { env: { PATH: '/usr/bin:/bin' }, encoding: 'utf8' },
    );
  assert.equal(complete(['hookdrill', 'send', 'stripe/customer.subscription.trial_w'], 2), 'stripe/customer.subscription.trial_will_end\n');
  assert.equal(
    complete(['npx', 'hookdrill', 'send', 'stripe/customer.subscription.trial_w'], 3),
    'stripe/customer.subscription.trial_will_end\n',
  );
  assert.equal(complete(['npx', 'hookdrill', 'ch'], 2), 'chaos\ncheck\n');
  // Another package's npx line is left to bash's default.
  assert.equal(complete(['npx', 'prettier', '--wr'], 2), '\n');
});
