/*
 * What reaches a person's terminal. Two layers, in this order:
 *
 * 1. safe() / escapeStrings(): every value that came from outside (an id, a type, an error, an
 *    answer body, a header, an API field, a file's contents) is escaped whole BEFORE hookdrill's
 *    own colour and layout are put around it. Line breaks and tabs included: a value that can
 *    break a line can print a line that looks like hookdrill's own ("OK … 0 missing"), and one
 *    that can hide text (SGR 8, "conceal") can make the real lines vanish.
 * 2. safeOutput(): the last guard on the whole text. It cannot tell an outside line break from a
 *    renderer's own, so it lets line breaks pass; which is why layer 1 must come first. It lets
 *    through only the colour codes chalk writes for the styles hookdrill uses; anything else
 *    (conceal, a screen clear, a title change) is shown escaped.
 */

import { stripVTControlCharacters } from 'node:util';

/**
 * What an outside value may not carry raw: C0 (TAB, LF and CR too), DEL, C1 (U+009B is a CSI to
 * some terminals), the Unicode line and paragraph separators, and the bidirectional controls that
 * reorder what is shown ("Trojan Source", CVE-2021-42574: U+202A–U+202E, U+2066–U+2069, and the
 * marks U+200E, U+200F, U+061C).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
const OUTSIDE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** The three a reader knows by sight; the rest as \xNN (up to U+00FF) or \uNNNN. */
const NAMED: Readonly<Record<string, string>> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };

function escapeChar(c: string): string {
  const named = NAMED[c];
  if (named) return named;
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * An outside value as one piece of one line: nothing in it can break the line, move the cursor,
 * colour or hide text, set the window title or reorder what is shown. Idempotent (its output has
 * nothing left to escape), so a value escaped twice reads the same.
 */
export function safe(text: string): string {
  return text.replace(OUTSIDE, escapeChar);
}

/** The part of a text before the first character safe() would escape: what can be shown, and pasted back, as it is. */
export function beforeUnsafe(text: string): string {
  OUTSIDE.lastIndex = 0;
  const m = OUTSIDE.exec(text);
  OUTSIDE.lastIndex = 0;
  return m ? text.slice(0, m.index) : text;
}

/**
 * A renderer's input with every string in it — and every key, a header's name is outside too —
 * passed through safe(). Each renderer calls it first on what it is given, so a field added later
 * is escaped without anyone remembering to: the guarantee is one line at the top of the function,
 * visible in review, not a safe() at each of dozens of interpolations. Plain objects and arrays
 * are copied; anything else (numbers, Buffers, Dates) is kept as it is.
 */
export function escapeStrings<T>(value: T): T {
  return escapeValue(value) as T;
}

function escapeValue(value: unknown): unknown {
  if (typeof value === 'string') return safe(value);
  if (Array.isArray(value)) return value.map(escapeValue);
  if (value === null || typeof value !== 'object') return value;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[safe(k)] = escapeValue(v);
  return out;
}

/**
 * The SGR parameters chalk writes for the styles hookdrill uses (bold, dim, red, green, yellow,
 * cyan: `grep -rhoE "chalk(\.[a-z]+)+" src`): each style's open code and its close (22 ends bold
 * and dim, 39 a colour). Named colours are these 16-colour codes at every chalk level. A test
 * (hostile-output) renders every style through chalk at levels 1–3 and checks they are all here:
 * a new style is added to the list, or the test says which code is missing.
 */
export const CHALK_SGR: ReadonlySet<string> = new Set(['1', '2', '22', '31', '32', '33', '36', '39']);

/** An SGR sequence (ESC [ params m), or any one character safe() escapes: one list of what is outside's to escape. */
const SGR_OR_CONTROL = new RegExp(`${String.raw`\u001b\[([0-9;]*)m`}|${OUTSIDE.source}`, 'g');

/**
 * Text about to be written for a person, whole: the last guard. chalk's own colour codes (CHALK_SGR)
 * and LF pass — a renderer's layout has line breaks — and every other control is escaped: an SGR
 * hookdrill never writes (8, conceal), a screen clear, a title change, CR, TAB, C1, the bidi controls.
 */
export function safeOutput(text: string): string {
  return text.replace(SGR_OR_CONTROL, (m, sgr: string | undefined) =>
    m === '\n' || (sgr !== undefined && CHALK_SGR.has(sgr)) ? m : safe(m),
  );
}

const C1 = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * JSON text as written to a terminal or a pipe: JSON.stringify escapes C0 controls but leaves DEL,
 * C1 (U+009B is a CSI to some terminals), the line separators and the bidi controls raw; here they
 * are \u escapes, which any JSON reader reads back as the same string (the shape is unchanged).
 */
export function safeJson(text: string): string {
  return text.replace(C1, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * A line redrawn in place, cut to fit the terminal: a line wider than the terminal wraps, and the
 * next `\r` redraw goes back only to the start of its last row, leaving a copy above each time.
 * Colour codes take no columns; a cut inside a colour ends it. One column is kept free (some
 * terminals wrap when the last one is written).
 */
export function fitToColumns(text: string, columns: number | undefined): string {
  if (!columns || columns < 2) return text;
  const room = columns - 1;
  if (visibleLength(text) <= room) return text;
  let shown = 0;
  let out = '';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes are kept, and take no columns
  for (const [piece] of text.matchAll(/\u001b\[[0-9;]*m|[\s\S]/gu)) {
    if (piece.startsWith('\u001b[')) out += piece;
    else if (shown < room - 1) {
      out += piece;
      shown++;
    } else break;
  }
  return `${out}…\u001b[0m`;
}

/** Columns a text takes: its characters without the terminal's control sequences (Node's own stripper). */
export function visibleLength(text: string): number {
  return [...stripVTControlCharacters(text)].length;
}

/**
 * Text for a terminal `columns` wide, each line too long broken at a space, its continuations
 * indented under it: the terminal itself would break it mid-word at the edge (check's findings,
 * demo's contrasts at 60 columns). Measured as fitToColumns measures (colour codes take no
 * columns; one column kept free); a word longer than the room is cut where the room ends. Not at
 * a terminal (columns undefined: a pipe, a file, CI's log), the text is left as it is.
 */
export function wrapToColumns(text: string, columns: number | undefined): string {
  if (!columns || columns < 20) return text;
  const room = columns - 1;
  return text
    .split('\n')
    .map((line) => (COMMAND.test(line) ? line : wrapLine(line, room)))
    .join('\n');
}

/**
 * A line that holds a command to copy (`hookdrill inspect --inbox … --check-run …`) is left to the
 * terminal's own wrap, which copies back as one line: a line break put in it would run half a
 * command when pasted.
 */
const COMMAND = /\bhookdrill [a-z]+ (-|\S+\/)/;

function wrapLine(line: string, room: number): string {
  if (visibleLength(line) <= room) return line;
  const lead = /^ */.exec(stripVTControlCharacters(line))?.[0].length ?? 0;
  // Continuations two columns in from the line's own indent, never more than half the room.
  const hang = ' '.repeat(Math.min(lead + 2, Math.floor(room / 2)));
  const rows: string[] = [];
  let row = '';
  let width = 0;
  for (const word of line.slice(lead).split(' ')) {
    let w = word;
    let len = visibleLength(w);
    const indent = rows.length === 0 && row === '' ? ' '.repeat(lead) : '';
    if (row !== '' && width + 1 + len > room) {
      rows.push(row);
      row = '';
      width = 0;
    }
    if (row === '') {
      row = rows.length === 0 ? indent : hang;
      width = row.length;
    } else {
      row += ' ';
      width++;
    }
    // A word wider than a whole row: as much as fits, then on.
    while (width + len > room) {
      const cut = room - width;
      const [head, tail] = splitVisible(w, cut);
      rows.push(row + head);
      row = hang;
      width = hang.length;
      w = tail;
      len = visibleLength(w);
    }
    row += w;
    width += len;
  }
  if (row.trim() !== '') rows.push(row);
  return rows.join('\n');
}

/** A text cut after `n` visible characters, colour codes kept with the part they are in. */
function splitVisible(text: string, n: number): [string, string] {
  let shown = 0;
  let i = 0;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes take no columns
  for (const [piece] of text.matchAll(/\u001b\[[0-9;]*m|[\s\S]/gu)) {
    if (!piece.startsWith('\u001b[')) {
      if (shown === n) break;
      shown++;
    }
    i += piece.length;
  }
  return [text.slice(0, i), text.slice(i)];
}

/** What is written for a person on this stream: wrapped to its width where it is a terminal. */
export function forTerminal(text: string, stream: { isTTY?: boolean; columns?: number } = process.stdout): string {
  return stream.isTTY ? wrapToColumns(text, stream.columns) : text;
}
