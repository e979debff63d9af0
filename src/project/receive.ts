import { UsageError } from '../util/errors.js';
import { knownProviderNames } from '../providers/names.js';

/** One provider of a listen that receives several: where it posts, and the variables holding its secret(s). */
export interface ReceiveEntry {
  provider: string;
  /** The path it posts to on listen's port (default `/<provider>`). */
  path: string;
  /** The NAMES of the environment variables holding its signing secret(s); several for a rotation. */
  secretEnv: string[];
  /** For a provider that signs the URL (Square, HubSpot): the URL set at the provider. */
  publicUrl?: string;
}

/** Paths listen answers itself: a provider there would never be reached. */
const OWN_PATHS = ['/metrics', '/healthz'];

/**
 * The project file's `receive`: `{"stripe": {"path": "/stripe", "secretEnv": "STRIPE_WEBHOOK_SECRET"}, …}`.
 * Each provider on a path of its own; a secret only by the name of the variable holding it.
 */
export function parseReceive(value: unknown, where: string): ReceiveEntry[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new UsageError(`${where}: "receive" must be an object: provider → {path, secretEnv}`);
  const known = knownProviderNames();
  const seen = new Map<string, string>();
  const out: ReceiveEntry[] = [];
  for (const [provider, v] of Object.entries(value)) {
    const at = `${where}: receive.${provider}`;
    if (!known.includes(provider)) throw new UsageError(`${at}: no such provider (one of: ${known.join(', ')})`);
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new UsageError(`${at}: expected {path, secretEnv}`);
    const e = v as Record<string, unknown>;
    for (const key of Object.keys(e))
      if (!['path', 'secretEnv', 'publicUrl'].includes(key))
        throw new UsageError(`${at}: unknown key "${key}" (known: path, secretEnv, publicUrl)`);
    const path = e.path === undefined ? `/${provider}` : e.path;
    if (typeof path !== 'string' || !/^\/[A-Za-z0-9._~\-/]*$/.test(path))
      throw new UsageError(`${at}: "path" must be a path starting with / (letters, digits, . _ ~ - /)`);
    if (OWN_PATHS.includes(path)) throw new UsageError(`${at}: "path" ${path} is listen's own; choose another`);
    const other = seen.get(path);
    if (other) throw new UsageError(`${at}: "path" ${path} is ${other}'s too: each provider needs a path of its own`);
    seen.set(path, provider);
    const envs = typeof e.secretEnv === 'string' ? [e.secretEnv] : e.secretEnv;
    // The value is never repeated in a message: if it is not a name, it may well be the secret.
    if (
      !Array.isArray(envs) ||
      envs.length === 0 ||
      !envs.every((n) => typeof n === 'string' && /^[A-Z_][A-Z0-9_]*$/.test(n) && n.length <= 64)
    )
      throw new UsageError(
        `${at}: "secretEnv" must be the NAME of an environment variable (capitals, digits, _; like STRIPE_WEBHOOK_SECRET), or a list of them, never the secret`,
      );
    if (e.publicUrl !== undefined && typeof e.publicUrl !== 'string') throw new UsageError(`${at}: "publicUrl" must be a URL`);
    out.push({ provider, path, secretEnv: envs as string[], ...(typeof e.publicUrl === 'string' ? { publicUrl: e.publicUrl } : {}) });
  }
  if (out.length === 0) throw new UsageError(`${where}: "receive" names no provider`);
  return out;
}
