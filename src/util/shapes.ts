import { UsageError } from './errors.js';
import { parseDuration } from './duration.js';
import { headerName, parseHeader } from './options.js';
import { headerValueProblem } from './http-headers.js';

/**
 * Library options in the shapes JavaScript writes them — arrays, objects, numbers — as well as the
 * strings the CLI hands over. Anything else is a UsageError that names the option, never a raw
 * TypeError from deep inside a command.
 */

/** What a value is, for an error message: `a number`, `an object`, `null`. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const t = typeof value;
  return t === 'object' || t === 'undefined' ? `an ${t}` : `a ${t}`;
}

function refuse(option: string, expected: string, value: unknown): never {
  throw new UsageError(`option ${option}: expected ${expected}, got ${describe(value)}`);
}

/** A string option (provider, url, inbox, …): a string, or not given. */
export function stringOption(value: unknown, option: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') refuse(option, 'a string', value);
  return value;
}

/** A list: an array of strings, or (as the CLI gives it) one comma-separated string. */
export function listOption(value: unknown, option: string): string[] | undefined {
  if (value === undefined) return undefined;
  const items =
    typeof value === 'string'
      ? value.split(',')
      : Array.isArray(value)
        ? (value as unknown[])
        : refuse(option, 'an array of strings or a comma-separated string', value);
  return items
    .map((item) => {
      if (typeof item !== 'string') refuse(option, 'strings in the array', item);
      return item.trim();
    })
    .filter(Boolean);
}

/** Repeatable values (secrets, fixtures, statuses): an array of strings, or one string. */
export function stringsOption(value: unknown, option: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return [value];
  if (!Array.isArray(value)) refuse(option, 'an array of strings', value);
  for (const item of value as unknown[]) if (typeof item !== 'string') refuse(option, 'strings in the array', item);
  return value as string[];
}

/** Durations between attempts: `[0, 100, '1s']` (a number is milliseconds) or `'0,100ms,1s'`; `'none'` or `[]` is none. */
export function delaysOption(value: unknown, option: string, flag: string): number[] | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') {
    if (value.trim() === '' || value.trim() === 'none') return [];
    return value.split(',').map((part) => parseDuration(part, flag));
  }
  if (!Array.isArray(value)) refuse(option, "an array of durations (milliseconds or '1s') or a comma-separated string", value);
  return (value as unknown[]).map((item) => {
    if (typeof item !== 'number' && typeof item !== 'string') refuse(option, "durations (milliseconds or '1s') in the array", item);
    return parseDuration(item, flag);
  });
}

/** Header values a request can carry: a control character (a line break above all) would split or break it. */
function headerValue(name: string, value: unknown, option: string): string {
  if (typeof value !== 'string' && typeof value !== 'number') refuse(`${option}.${name}`, 'a string or a number', value);
  const text = String(value);
  const problem = headerValueProblem(text);
  if (problem) throw new UsageError(`header ${name}: its value holds ${problem}; no request can carry it`);
  return text;
}

/** Extra headers: `{ 'X-Env': 'ci' }`, `[['X-Env', 'ci']]`, or the CLI's `['X-Env: ci']`. */
export function headersOption(value: unknown, option: string): [string, string][] {
  if (value === undefined) return [];
  const check = ([name, v]: [string, unknown]): [string, string] => [headerName(name), headerValue(name, v, option)];
  if (Array.isArray(value)) {
    return (value as unknown[]).map((item) => {
      if (typeof item === 'string') {
        const [name, v] = parseHeader(item);
        return [name, headerValue(name, v, option)];
      }
      if (Array.isArray(item) && item.length === 2 && typeof item[0] === 'string') return check(item as [string, unknown]);
      return refuse(option, `"Name: value" strings or [name, value] pairs`, item);
    });
  }
  if (typeof value === 'object' && value !== null) return Object.entries(value).map(check);
  return refuse(option, `an object of headers, [name, value] pairs or "Name: value" strings`, value);
}

/** Environment for a child process: an object of strings (a number is written as one). */
export function envOption(value: unknown): Record<string, string> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) refuse('env', 'an object of NAME → value', value);
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(value)) {
    if (typeof v !== 'string' && typeof v !== 'number') refuse(`env.${name}`, 'a string', v);
    out[name] = String(v);
  }
  return out;
}

/** One string or several: secrets, fixtures, statuses. */
export type Strings = string | readonly string[];
/** Waits between attempts: `[0, 100, '1s']` or `'0,100ms,1s'`. */
export type Delays = string | readonly (number | string)[];
/** Extra headers: `{ 'X-Env': 'ci' }`, `[['X-Env', 'ci']]` or `['X-Env: ci']`. */
export type HeaderSet = Readonly<Record<string, string | number>> | readonly (string | readonly [string, string | number])[];
