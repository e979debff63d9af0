import { UsageError } from '../util/errors.js';
import { discord } from './discord.js';
import { github } from './github.js';
import { gitlab } from './gitlab.js';
import { postmark } from './postmark.js';
import { intercom } from './intercom.js';
import { twilio } from './twilio.js';
import { hubspot } from './hubspot.js';
import { line } from './line.js';
import { linear } from './linear.js';
import { mailgun } from './mailgun.js';
import { paddle } from './paddle.js';
import { plaid } from './plaid.js';
import { paypal } from './paypal.js';
import { pubsub } from './pubsub.js';
import { contentful } from './contentful.js';
import { graph } from './graph.js';
import { sendgrid } from './sendgrid.js';
import { shopify } from './shopify.js';
import { slack } from './slack.js';
import { sns } from './sns.js';
import { square } from './square.js';
import { standard, svix } from './standard.js';
import { stripe } from './stripe.js';
import { twitch } from './twitch.js';
import { workos } from './workos.js';
import { zoom } from './zoom.js';
import type { Provider, ProviderName, TimingProfile } from './types.js';
import { declarationFault, declarationOf, knownProviderNames, registerDeclarations } from './names.js';
import { checkDeclaration } from './declaration.js';
import type { CheckedDeclaration, ProviderDeclaration } from './declaration.js';
import { declaredProvider } from './declared.js';

export * from './types.js';

export const providers: Readonly<Record<ProviderName, Provider>> = {
  stripe,
  github,
  slack,
  standard,
  svix,
  shopify,
  paddle,
  workos,
  square,
  discord,
  line,
  hubspot,
  zoom,
  linear,
  sendgrid,
  gitlab,
  postmark,
  intercom,
  twitch,
  mailgun,
  twilio,
  sns,
  pubsub,
  plaid,
  contentful,
  paypal,
  graph,
};

/** The built-in providers' names (knownProviderNames adds those a project file declares). */
export const providerNames = Object.keys(providers) as ProviderName[];

/** A built-in provider's name, or one a project file declares (it passes as a ProviderName). */
export function isProviderName(name: string): name is ProviderName {
  return Object.hasOwn(providers, name) || declarationOf(name) !== undefined;
}

/** Each declaration's provider, made once: a declaration replaced is a new key, so nothing goes stale. */
const built = new WeakMap<CheckedDeclaration, Provider>();

export function getProvider(name: string): Provider {
  if (Object.hasOwn(providers, name)) return providers[name as ProviderName];
  const declaration = declarationOf(name);
  if (declaration) {
    const made = built.get(declaration) ?? declaredProvider(declaration);
    built.set(declaration, made);
    return made;
  }
  // A project file that could not be read may have declared it: its own error says why.
  const fault = declarationFault();
  if (fault) throw fault;
  throw new UsageError(`unknown provider "${name}" (one of: ${knownProviderNames().join(', ')})`);
}

/**
 * A provider of your own, from its declaration (the shape of a project file's `providers.<name>`),
 * made known to everything that takes a provider by name: send, listen, check, chaos. Paths in it
 * (its fixtures folder) are from `dir` (default: the working directory).
 */
export function declareProvider(name: string, declaration: ProviderDeclaration, o: { dir?: string } = {}): Provider {
  if (Object.hasOwn(providers, name)) throw new UsageError(`${name} is built in; give the provider a name of its own`);
  registerDeclarations([checkDeclaration(name, declaration, 'declareProvider', o.dir ?? process.cwd())]);
  return getProvider(name);
}

/**
 * Every provider here: the built-in ones, then those declared. A project file whose providers
 * could not be read is its error: a list without them would hide that they are missing.
 */
export function allProviders(): Provider[] {
  const fault = declarationFault();
  if (fault) throw fault;
  return knownProviderNames().map(getProvider);
}

/** Every profile of every provider, by name: `--profile slack` works whichever provider signs. */
export function getProfile(name: string): TimingProfile {
  for (const provider of allProviders()) {
    // Own properties only: `--profile constructor` must not find Object.prototype's.
    if (Object.hasOwn(provider.profiles, name)) return provider.profiles[name] as TimingProfile;
  }
  const all = allProviders().flatMap((p) => Object.keys(p.profiles));
  throw new UsageError(`unknown profile "${name}" (one of: ${all.join(', ')})`);
}
