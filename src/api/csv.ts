// CSV cells (RFC 4180) that a spreadsheet opens as data, never as a formula (OWASP "CSV Injection").

/** A text cell beginning with one of these is a formula to Excel, LibreOffice and Google Sheets. */
const FORMULA_START = /^[=+\-@\t\r]/;
/** A plain decimal number ("-5", "+1.5e3"): a spreadsheet reads it as a number, not a formula. */
const PLAIN_NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One cell. Text (ALPHANUMERIC values, annotations) that a spreadsheet would take for a formula is
 * prefixed with `'`; numbers and booleans are written as they are; null and undefined are empty.
 * Quoting applies after the prefix.
 */
export function csvCell(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v !== 'string') return String(v);
  const text = FORMULA_START.test(v) && !PLAIN_NUMBER.test(v) ? `'${v}` : v;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One line: cells joined by commas, ended by CRLF. */
export function csvRow(cells: readonly unknown[]): string {
  let line = '';
  for (let i = 0; i < cells.length; i++) line += (i === 0 ? '' : ',') + csvCell(cells[i]);
  return `${line}\r\n`;
}
