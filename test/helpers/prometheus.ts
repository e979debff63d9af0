import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

/** One sample as Prometheus's own client library reads it: `name` with its suffix (`_count`, `_bucket`), labels, value. */
export interface Sample {
  family: string;
  type: string;
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Debian's python3-prometheus-client, the official client's parser (.ci/run installs it with apt). */
const PYTHON = '/usr/bin/python3';
const SCRIPT = `
import json, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for f in text_string_to_metric_families(sys.stdin.read()):
    for s in f.samples:
        out.append({"family": f.name, "type": f.type, "name": s.name, "labels": s.labels, "value": s.value})
print(json.dumps(out))
`;

/** undefined when the parser can run here; otherwise why not (the test is skipped — a failure under HOOKDRILL_REQUIRE_TOOLS=1, as in CI). */
export async function prometheusParserMissing(): Promise<string | undefined> {
  const ok =
    existsSync(PYTHON) &&
    (await run('').then(
      () => true,
      () => false,
    ));
  if (ok) return undefined;
  const why = `Prometheus's parser is not installed (apt install python3-prometheus-client)`;
  if (process.env.HOOKDRILL_REQUIRE_TOOLS === '1') throw new Error(`${why} (HOOKDRILL_REQUIRE_TOOLS=1: required, not skipped)`);
  return why;
}

/** The text format, parsed by prometheus_client: a malformed exposition throws, as a scrape would fail. */
export async function parsePrometheus(text: string): Promise<Sample[]> {
  return JSON.parse(await run(text)) as Sample[];
}

function run(input: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, ['-c', SCRIPT], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`prometheus_client could not parse it: ${err}`))));
    child.stdin.end(input);
  });
}
