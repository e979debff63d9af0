import { listShippedFixtures } from '../fixtures.js';
import { loadFixtureFile } from '../fixtures.js';
import { getProvider } from '../providers/index.js';
import type { ProviderName } from '../providers/index.js';

export interface FixtureEntry {
  provider: ProviderName;
  /** What to pass to `send`: `stripe/invoice.paid`. */
  name: string;
  eventType: string;
  path: string;
}

export interface FixturesResult {
  command: 'fixtures';
  fixtures: FixtureEntry[];
}

export interface FixturesOptions {
  provider?: string;
}

export async function run(o: FixturesOptions = {}): Promise<FixturesResult> {
  const only = o.provider ? getProvider(o.provider).name : undefined;
  const fixtures = listShippedFixtures()
    .filter((f) => !only || f.provider === only)
    .map((f) => {
      const fixture = loadFixtureFile(f.path, f.provider);
      return {
        provider: f.provider,
        name: `${f.provider}/${f.name}`,
        eventType: getProvider(f.provider).describe(fixture.body, f.name).eventType,
        path: f.path,
      };
    });
  return { command: 'fixtures', fixtures };
}
