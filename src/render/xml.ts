import { safe } from '../util/terminal.js';

/**
 * Text made safe for an XML attribute or element (JUnit reports): XML's own specials. It keeps line
 * breaks (a failure's text is laid out in lines), so a value from outside is escaped with safe()
 * first — the junit renderers escape their whole input (escapeStrings) before building the XML.
 */
export function xml(text: string): string {
  return (
    text
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      // XML 1.0 forbids most control characters outright, even escaped.
      // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '')
  );
}

/** A JUnit XML document around test cases already rendered: one suite, as CI systems read it. */
export function junitReport(
  suite: string,
  cases: readonly string[],
  counts: { failures: number; skipped?: number; errors?: number; seconds: number },
): string {
  const time = counts.seconds.toFixed(3);
  const skipped = counts.skipped ?? 0;
  const errors = counts.errors ?? 0;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="hookdrill" tests="${cases.length}" failures="${counts.failures}" errors="${errors}" skipped="${skipped}" time="${time}">`,
    `  <testsuite name="${xml(safe(suite))}" tests="${cases.length}" failures="${counts.failures}" errors="${errors}" skipped="${skipped}" time="${time}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
