/**
 * Text for a terminal: control characters (C0, DEL, C1 — escape sequences start with one) shown
 * escaped, so a string from a webhook body or a provider's package cannot move the cursor, clear
 * the screen or set the window title. Every line printed for a person passes through here.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

export function safe(text: string): string {
  return text.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
const SGR_OR_CONTROL = /\u001b\[[0-9;]*m|[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * Text about to be written for a person, whole: the last guard. Colour (SGR: ESC [ … m, what chalk
 * writes) and line breaks pass; every other control character is escaped, so a string a renderer
 * forgot to pass through safe() still cannot set the title, clear the screen or move the cursor.
 */
export function safeOutput(text: string): string {
  return text.replace(SGR_OR_CONTROL, (m) => (m.length > 1 ? m : safe(m)));
}

const C1 = /[\u007f-\u009f\u2028\u2029]/g;

/**
 * JSON text as written to a terminal or a pipe: JSON.stringify escapes C0 controls but leaves DEL
 * and C1 (U+009B is a CSI to some terminals) and the line separators raw; here they are \u escapes,
 * which any JSON reader reads back as the same string.
 */
export function safeJson(text: string): string {
  return text.replace(C1, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
