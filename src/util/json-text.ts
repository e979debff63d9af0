import { UsageError } from './errors.js';

/**
 * JSON text of a value, or a UsageError naming `where` when it is nested too deep for
 * JSON.stringify (which recurses, and runs out of stack around ten thousand levels; JSON.parse
 * does not, so such a value can arrive). Never a RangeError from deep inside a command.
 */
export function jsonText(value: unknown, where: string, space?: number): string {
  try {
    return JSON.stringify(value, null, space);
  } catch (err) {
    if (err instanceof RangeError) throw new UsageError(`${where}: nested too deep to be written as JSON`);
    throw err;
  }
}
