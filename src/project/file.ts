import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../util/errors.js';
import { PROVIDER_NAMES, replaceProjectDeclarations } from '../providers/names.js';
import { PACK_NAMES } from '../providers/pack.js';
import { checkDeclaration } from '../providers/declaration.js';
import type { CheckedDeclaration } from '../providers/declaration.js';
import { jsonPosition } from '../util/json-position.js';
import { readRegularFile } from '../util/regular-file.js';
import { checkUniqueNames, parseRouteList } from '../routes/parse.js';
import type { Route } from '../routes/types.js';
import { parseReceive } from './receive.js';
import type { ReceiveEntry } from './receive.js';

/**
 * The project file: what a team would otherwise repeat on every command line, so that CI runs
 * `npx hookdrill check` and `npx hookdrill chaos` with no flags. `hookdrill.config.json` in the
 * working directory, or a `hookdrill` key in its package.json. Flags given on the command line win.
 * The secret itself is never in the file: `secretEnv` names the environment variable holding it.
 */
export interface ProjectFile {
  provider?: string;
  /** The environment variable that holds the signing secret (never the secret itself). */
  secretEnv?: string;
  /** Where the receiver listens. */
  url?: string;
  /** The shell command that starts the receiver (chaos, check). */
  receiver?: string;
  /** The receiver's hookdrill inbox (a file or postgres:// URL) … */
  inbox?: string;
  /** … or a command printing the delivery ids it holds, one per line. */
  stored?: string;
  /** A command printing the delivery ids it has processed (chaos). */
  processed?: string;
  /** check cases to skip. */
  skip?: string[];
  /** Providers of the team's own, by name: each one's scheme (providers/declaration.ts). */
  providers?: Record<string, CheckedDeclaration>;
  /** listen: which local service each event type goes to, in order, the first match winning. */
  routes?: Route[];
  /** listen: the providers one listen receives, each on a path of its own with its own secret(s). */
  receive?: ReceiveEntry[];
}

export const PROJECT_FILE = 'hookdrill.config.json';

const KEYS: Record<keyof ProjectFile, 'string' | 'string[]' | 'object'> = {
  provider: 'string',
  secretEnv: 'string',
  url: 'string',
  receiver: 'string',
  inbox: 'string',
  stored: 'string',
  processed: 'string',
  skip: 'string[]',
  providers: 'object',
  routes: 'object',
  receive: 'object',
};

/** Which project keys each command takes, as which of its flags. */
const USES: Record<string, readonly (keyof ProjectFile)[]> = {
  send: ['provider', 'secretEnv', 'url'],
  check: ['provider', 'secretEnv', 'url', 'receiver', 'inbox', 'stored', 'skip'],
  chaos: ['provider', 'secretEnv', 'url', 'receiver', 'inbox', 'stored', 'processed'],
  scenario: ['secretEnv', 'url'],
  pull: ['provider', 'secretEnv'],
  reconcile: ['provider', 'inbox', 'stored'],
  import: ['provider', 'inbox'],
  inspect: ['inbox'],
  requeue: ['inbox'],
  replay: ['inbox'],
  listen: ['routes', 'receive'],
};

/** The project file in `dir`, checked; undefined when there is none. Every fault is one line naming its key. */
export function loadProjectFile(dir: string): { file: string; config: ProjectFile } | undefined {
  const own = join(dir, PROJECT_FILE);
  if (existsSync(own)) return { file: PROJECT_FILE, config: validateProjectFile(parse(own, PROJECT_FILE), PROJECT_FILE, dir) };
  const pkg = join(dir, 'package.json');
  if (!existsSync(pkg)) return undefined;
  const json = parse(pkg, 'package.json');
  if (typeof json !== 'object' || json === null || !('hookdrill' in json)) return undefined;
  return { file: 'package.json', config: validateProjectFile((json as { hookdrill: unknown }).hookdrill, 'package.json "hookdrill"', dir) };
}

/**
 * The providers the project file in `dir` declares, made known to every command before its flags
 * are read (`--provider acme`). A file that cannot be read is kept as its error: a command asking
 * for a provider it may have declared says why, and commands that read the file say it anyway.
 */
export function registerProjectProviders(dir: string): void {
  try {
    replaceProjectDeclarations(Object.values(loadProjectFile(dir)?.config.providers ?? {}));
  } catch (err) {
    if (err instanceof UsageError) replaceProjectDeclarations(err);
    else throw err;
  }
}

/**
 * A project file (or the package.json holding one) is never this large. A FIFO or a device there
 * (a committed symlink to /dev/zero) is refused unread: reading it hung every command in the directory.
 */
const PROJECT_FILE_MAX_BYTES = 16 * 1024 * 1024;

function parse(path: string, name: string): unknown {
  const text = readRegularFile(path, { what: name, hint: `make ${name} a JSON file`, maxBytes: PROJECT_FILE_MAX_BYTES });
  if (text === undefined) throw new UsageError(`cannot read ${name}: it was removed while hookdrill read it`);
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new UsageError(`${name}: not valid JSON${jsonPosition(err)}`);
  }
}

export function validateProjectFile(value: unknown, where: string, dir = '.'): ProjectFile {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError(`${where}: expected an object of settings`);
  const out: ProjectFile = {};
  for (const [key, v] of Object.entries(value)) {
    const kind = KEYS[key as keyof ProjectFile];
    if (!kind) throw new UsageError(`${where}: unknown key "${key}" (known: ${Object.keys(KEYS).join(', ')})`);
    if (key === 'routes') {
      out.routes = parseRouteList(v, where);
      checkUniqueNames(out.routes, `${where}: routes`);
      continue;
    }
    if (key === 'receive') {
      out.receive = parseReceive(v, where);
      continue;
    }
    if (kind === 'object') {
      out.providers = declarations(v, where, dir);
      continue;
    }
    const ok = kind === 'string' ? typeof v === 'string' && v !== '' : Array.isArray(v) && v.every((x) => typeof x === 'string');
    if (!ok) throw new UsageError(`${where}: "${key}" must be ${kind === 'string' ? 'a non-empty string' : 'a list of strings'}`);
    (out as Record<string, unknown>)[key] = v;
  }
  // hookdrill's pack (providers/pack.ts) is as known as the built-in providers.
  const names = [...PROVIDER_NAMES, ...PACK_NAMES, ...Object.keys(out.providers ?? {})];
  if (out.provider !== undefined && !names.includes(out.provider)) {
    throw new UsageError(`${where}: "provider" is ${JSON.stringify(out.provider)}; expected one of ${names.join(', ')}`);
  }
  // The value is never repeated in a message: if it is not a name, it may well be the secret.
  if (out.secretEnv !== undefined && (!/^[A-Z_][A-Z0-9_]*$/.test(out.secretEnv) || out.secretEnv.length > 64)) {
    throw new UsageError(
      `${where}: "secretEnv" must be the NAME of an environment variable (capitals, digits, _; like STRIPE_WEBHOOK_SECRET), never the secret`,
    );
  }
  // A project file is committed and shared: no secret, in any setting.
  for (const key of ['url', 'inbox', 'receiver', 'stored', 'processed'] as const) {
    const why = out[key] !== undefined ? secretIn(out[key]) : undefined;
    if (why) throw new UsageError(`${where}: "${key}" holds ${why}; leave it out (the file is shared: use an environment variable)`);
  }
  if (out.inbox !== undefined && out.stored !== undefined) throw new UsageError(`${where}: give "inbox" or "stored", not both`);
  return out;
}

/**
 * A command's flags with the project file's settings under them: a flag given wins; a setting the
 * command does not take is ignored. The secret comes from the variable `secretEnv` names, unless
 * --secret or HOOKDRILL_SECRET gives one.
 */
export function withProjectFile<F extends object>(command: string, flags: F, dir: string, env: NodeJS.ProcessEnv): F {
  const uses = USES[command];
  if (!uses) return flags;
  const found = loadProjectFile(dir);
  if (!found) return flags;
  const { config, file } = found;
  const given = flags as Record<string, unknown>;
  // check --route NAME judges a route's target: its URL, provider and secrets are the route's and
  // its receive entry's, never the file's own receiver settings (another service altogether).
  if (command === 'check' && given.route !== undefined)
    return { ...given, projectRoutes: config.routes, projectReceive: config.receive } as F;
  const merged: Record<string, unknown> = { ...given };
  const take = (key: keyof ProjectFile, flag: string, value: unknown) => {
    if (uses.includes(key) && value !== undefined && given[flag] === undefined) merged[flag] = value;
  };
  take('provider', 'provider', config.provider);
  take('url', 'url', config.url);
  // A target the flags name (--url other than the file's) is not the file's receiver: the file's
  // commands (receiver, stored, processed) and its store are not that target's, and a cloned
  // repository's file must not run shell commands the flags never asked for.
  const ownTarget = given.url === undefined || given.url === config.url;
  if (ownTarget) take('receiver', 'receiver', config.receiver);
  // A --provider other than the file's is not signed with the file's secret.
  const sameProvider = given.provider === undefined || given.provider === config.provider;
  if (ownTarget) take('processed', 'processed', config.processed);
  // --only chooses the cases: the file's skip must not take away the one asked for.
  if (given.only === undefined) take('skip', 'skip', config.skip?.join(','));
  // The store: a flag for either one replaces both settings.
  if (ownTarget && given.inbox === undefined && given.stored === undefined) {
    take('inbox', 'inbox', config.inbox);
    take('stored', 'stored', config.stored);
  }
  // The file's routes and providers are the command's unless its flags give their own.
  if (uses.includes('routes') && config.routes && given.route === undefined) merged.projectRoutes = config.routes;
  if (uses.includes('receive') && config.receive && given.provider === undefined) merged.projectReceive = config.receive;
  if (
    uses.includes('secretEnv') &&
    config.secretEnv &&
    sameProvider &&
    given.secret === undefined &&
    given.secretEnv === undefined &&
    given.secretFile === undefined &&
    !env.HOOKDRILL_SECRET
  ) {
    const secret = env[config.secretEnv];
    // scenario with no argument only lists: it needs no secret.
    if (!secret && command !== 'scenario')
      throw new UsageError(`${file}: "secretEnv" names ${config.secretEnv}, which is not set (or give --secret)`);
    if (secret) merged.secret = [secret];
  }
  return merged as F;
}

/** The "providers" setting: each declaration checked, none named as a built-in one, none holding a secret. */
function declarations(value: unknown, where: string, dir: string): Record<string, CheckedDeclaration> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new UsageError(`${where}: "providers" must be an object of provider names and their schemes`);
  const out: Record<string, CheckedDeclaration> = {};
  for (const [name, declared] of Object.entries(value)) {
    if ((PROVIDER_NAMES as readonly string[]).includes(name))
      throw new UsageError(`${where}: providers.${name}: ${name} is built in; give the provider a name of its own`);
    const d = checkDeclaration(name, declared, where, dir);
    for (const [header, text] of Object.entries(d.headers ?? {})) {
      const why = secretIn(text) ?? (/^(basic|bearer|token)\s+\S/i.test(text) ? 'a credential' : undefined);
      if (why) throw new UsageError(`${where}: providers.${name}.headers.${header} holds ${why}; leave it out (the file is shared)`);
    }
    out[name] = d;
  }
  return out;
}

/** What in a setting looks like a credential: a signing secret, a --secret value, a password. */
function secretIn(text: string): string | undefined {
  if (/\b(whsec|shpss|sk_live|sk_test|rk_live|rk_test)_[A-Za-z0-9+/=]{6,}/.test(text)) return 'a signing secret or API key';
  if (/--secret[= ]+(?!["']?\$)\S+/.test(text)) return 'a --secret value (use $VARIABLE)';
  if (/\bpassword=(?!\$)[^&\s]+/i.test(text)) return 'a password';
  if (/^[a-z][a-z0-9+.-]*:\/\/[^/@\s]*:[^@\s]+@/i.test(text)) return 'a password in the URL';
  return undefined;
}
