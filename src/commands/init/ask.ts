import { createInterface } from 'node:readline';
import { UsageError } from '../../util/errors.js';
import { knownProviderNames } from '../../providers/names.js';
import type { InitOptions } from '../../project/init.js';

/** Ask at the terminal for each setting the flags did not give; Enter keeps the suggestion in brackets. */
export async function askForProjectFile(given: InitOptions): Promise<InitOptions> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  // Lines read as they come, answers taken in order: what is typed (or pasted) ahead is kept.
  const lines = rl[Symbol.asyncIterator]();
  const ask = async (question: string, suggestion?: string): Promise<string | undefined> => {
    process.stdout.write(`${question}${suggestion ? ` [${suggestion}]` : ''}: `);
    const next = await lines.next();
    // Ctrl-D: the person stopped answering; nothing is written.
    if (next.done) throw new UsageError('init: no answer (end of input); nothing written');
    const answer = String(next.value).trim();
    return answer || suggestion || undefined;
  };
  try {
    const provider = given.provider ?? (await ask(`provider (${knownProviderNames().join(', ')})`, 'stripe'));
    const out: InitOptions = { ...given, ...(provider ? { provider } : {}) };
    out.secretEnv ??= await ask(
      'environment variable holding the signing secret',
      `${(provider ?? 'webhook').toUpperCase()}_WEBHOOK_SECRET`,
    );
    out.url ??= await ask('where your receiver listens', 'http://127.0.0.1:3000/webhooks');
    out.receiver ??= await ask('command that starts your receiver (empty: you start it)');
    if (out.inbox === undefined && out.stored === undefined) {
      out.stored = await ask('command printing the delivery ids it stored (empty: none)');
    }
    return out;
  } finally {
    rl.close();
  }
}
