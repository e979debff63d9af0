import { UsageError } from '../../util/errors.js';
import { displayPostgres } from '../../inbox/postgres/target.js';
import { LISTEN_DEFAULTS } from '../../receiver/listen-defaults.js';

export interface InboxFlags {
  inbox?: string;
  schema?: string;
}

/** The incident tools' --inbox help: listen's default file, or the project file's, when absent. */
export const INBOX_DEFAULT_HELP = `(default: the project file's inbox, else ${LISTEN_DEFAULTS.inbox}, where listen keeps it)`;

/** The inbox an incident tool opens: the one given, else where listen keeps it by default. */
export function inboxOrDefault(flags: InboxFlags): { inbox: string } {
  return { inbox: inboxOptions(flags).inbox ?? LISTEN_DEFAULTS.inbox };
}

export const SCHEMA_HELP = 'with a postgres:// inbox: the schema holding it (default: ?schema= in the URL, else hookdrill)';

/** The inbox target, with --schema folded into a Postgres URL so that every backend reads one string. */
export function inboxOptions(flags: InboxFlags): { inbox?: string } {
  if (flags.schema === undefined) return flags.inbox !== undefined ? { inbox: flags.inbox } : {};
  if (!flags.inbox || !/^postgres(ql)?:\/\//i.test(flags.inbox)) throw new UsageError('--schema goes with a postgres:// --inbox');
  let url: URL;
  try {
    url = new URL(flags.inbox);
  } catch {
    throw new UsageError(`--inbox ${displayPostgres(flags.inbox)}: not a valid postgres:// URL`);
  }
  url.searchParams.set('schema', flags.schema);
  return { inbox: url.toString() };
}
