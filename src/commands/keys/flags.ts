import { defineCommand } from '../../cli/spec.js';
import { show } from '../../cli/io.js';
import { declareSigner, secretsFrom } from '../../cli/flags/signer.js';
import type { SignerFlags } from '../../cli/flags/signer.js';
import { UsageError } from '../../util/errors.js';
import type { KeysOptions } from '../../providers/keys-run.js';

export interface KeysFlags extends SignerFlags {
  json?: boolean;
}

export const keys = defineCommand<KeysFlags, KeysOptions>({
  name: 'keys',
  declare: (cmd) => {
    cmd
      .description(
        "print the public key a receiver is configured with, for a provider that signs with a key pair (discord, sendgrid; sns: the certificate file and the host it is served on): of hookdrill's own signing key, made on first use, or of --secret PRIVATE-KEY; never the private key",
      )
      .argument('[provider]', 'the provider (default: --provider)');
    declareSigner(cmd, {
      provider: 'the provider',
      secret: "your own private key instead of hookdrill's (PEM; Discord's also as its 32-byte seed in hex)",
    });
    return cmd.option('--json', 'print the result as JSON');
  },
  options: ({ args, flags, env }) => {
    // --secret only, not HOOKDRILL_SECRET: a receiver's environment holds the public key there,
    // and 64 hex characters read as a private seed would print another key.
    const signer = { provider: flags.provider, secrets: secretsFrom(flags, env, false) };
    const named = args[0] as string | undefined;
    // Both given and different: which key to print would be a guess, and the wrong one configures a receiver that refuses every delivery.
    if (named && signer.provider && named !== signer.provider) {
      throw new UsageError(`the provider is named twice, differently (${named} and --provider ${signer.provider}): name it once`);
    }
    const provider = named ?? signer.provider;
    if (!provider) throw new UsageError('name the provider: hookdrill keys discord');
    return { provider, ...(signer.secrets.length ? { secrets: signer.secrets } : {}) };
  },
  async execute(options, flags) {
    const [{ run }, { renderKeys }] = await Promise.all([import('../../providers/keys-run.js'), import('../../render/keys.js')]);
    const result = await run(options);
    show(flags.json, result, () => renderKeys(result));
  },
});
