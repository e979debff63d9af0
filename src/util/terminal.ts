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
