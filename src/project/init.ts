import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { UsageError } from '../util/errors.js';
import { PROJECT_FILE, validateProjectFile } from './file.js';
import type { ProjectFile } from './file.js';

export interface InitOptions extends ProjectFile {
  /** The directory to write hookdrill.config.json in (default: the working directory). */
  dir?: string;
  /** Replace a project file that is already there. */
  force?: boolean;
}

export interface InitResult {
  command: 'init';
  ok: true;
  file: string;
  config: ProjectFile;
}

/** Write hookdrill.config.json from these settings, checked as any project file is; never over an existing one without force. */
export async function run(o: InitOptions): Promise<InitResult> {
  const { dir = process.cwd(), force, ...settings } = o;
  const config: ProjectFile = Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined && v !== '')) as ProjectFile;
  if (!config.provider) throw new UsageError('init: say which provider (--provider)');
  validateProjectFile(config, 'init');
  const file = join(dir, PROJECT_FILE);
  if (existsSync(file) && !force) throw new UsageError(`${PROJECT_FILE} is already there; --force replaces it`);
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  writeFileSync(tmp, `${JSON.stringify(config, null, 2)}\n`);
  renameSync(tmp, file);
  return { command: 'init', ok: true, file, config };
}
