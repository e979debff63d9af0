import { appendFileSync } from 'node:fs';

/** A module-resolution hook that records every module a process loads (see cli.test.ts). */
export async function resolve(
  specifier: string,
  context: unknown,
  next: (specifier: string, context: unknown) => Promise<{ url: string }>,
): Promise<{ url: string }> {
  const result = await next(specifier, context);
  if (process.env.HOOKDRILL_TRACE_FILE) appendFileSync(process.env.HOOKDRILL_TRACE_FILE, `${result.url}\n`);
  return result;
}
