// A point's text renderer (Mango's idea): how its values are written for people. The one rule for
// both the API (the RENDERED field of Mango's point-value queries) and the console, which bundles
// this file (web/src/value-format.ts), so a value reads the same everywhere. No DOM, no Node.
//
//   PLAIN       numbers to 6 significant digits, the whole integer part kept (75.21472877765548 → 75.2147);
//               other values as text; with the unit.
//   ANALOG      numbers by a decimal pattern, Java DecimalFormat's common subset: "0.00", "#,##0.0", "0.###"
//               (0: a digit always shown, #: a digit shown when not zero, ",": thousands grouping); with the unit.
//   BINARY      false/true as zeroLabel/oneLabel.
//   MULTISTATE  each state's text by its key; a state without one as its number.
// Numbers are written the same way in every locale ("1,234.5", rounding half away from zero), as the API does.

export const TEXT_RENDERER_TYPES = ['PLAIN', 'ANALOG', 'BINARY', 'MULTISTATE'] as const;
export type TextRendererType = (typeof TEXT_RENDERER_TYPES)[number];

export interface MultistateText {
  key: number;
  text: string;
}

export type TextRenderer =
  | { type: 'PLAIN' }
  | { type: 'ANALOG'; format: string }
  | { type: 'BINARY'; zeroLabel: string; oneLabel: string }
  | { type: 'MULTISTATE'; values: MultistateText[] };

export const PLAIN_RENDERER: TextRenderer = { type: 'PLAIN' };

/** Which renderer types fit which data type (PLAIN fits all). */
const FITS: Record<TextRendererType, readonly string[]> = {
  PLAIN: ['NUMERIC', 'BINARY', 'MULTISTATE', 'ALPHANUMERIC'],
  ANALOG: ['NUMERIC'],
  BINARY: ['BINARY'],
  MULTISTATE: ['MULTISTATE'],
};

export function rendererFits(type: TextRendererType, dataType: string): boolean {
  return FITS[type].includes(dataType);
}

/** The renderer types a point of this data type may have. */
export function rendererTypesFor(dataType: string): TextRendererType[] {
  return TEXT_RENDERER_TYPES.filter((t) => rendererFits(t, dataType));
}

/** A decimal pattern: integer part of # , 0 (a 0 never before a #), optional fraction of 0s then #s. */
const PATTERN = /^([#,]*)(0*)(?:\.(0*)(#*))?$/;
/** Number.prototype.toFixed and Intl take at most 20 (and more digits than a double holds mean nothing). */
const MAX_FRACTION_DIGITS = 15;

interface DecimalPattern {
  minInteger: number;
  minFraction: number;
  maxFraction: number;
  grouping: boolean;
}

function parsePattern(format: string): DecimalPattern | string {
  const m = PATTERN.exec(format);
  if (!m || !/[0#]/.test(format)) return 'must be a decimal pattern such as "0.00", "#,##0.0" or "0.###"';
  const [, lead = '', zeros = '', fracZeros = '', fracHashes = ''] = m;
  if (lead.startsWith(',') || (lead.endsWith(',') && zeros === '')) return 'a "," must stand between digits';
  if (fracZeros.length + fracHashes.length > MAX_FRACTION_DIGITS) return `must have at most ${MAX_FRACTION_DIGITS} fraction digits`;
  return { minInteger: zeros.length, minFraction: fracZeros.length, maxFraction: fracZeros.length + fracHashes.length, grouping: lead.includes(',') };
}

/** What is wrong with a renderer for a point of `dataType`, as (field, message) pairs; none: it is fine. */
export function textRendererProblems(r: TextRenderer, dataType: string): { field: string; message: string }[] {
  if (!rendererFits(r.type, dataType)) return [{ field: 'type', message: `must be one of ${rendererTypesFor(dataType).join(', ')} for a ${dataType} point` }];
  const problems: { field: string; message: string }[] = [];
  if (r.type === 'ANALOG') {
    if (typeof r.format !== 'string') problems.push({ field: 'format', message: 'is required for ANALOG' });
    else {
      const p = parsePattern(r.format);
      if (typeof p === 'string') problems.push({ field: 'format', message: p });
    }
  } else if (r.type === 'BINARY') {
    if (typeof r.zeroLabel !== 'string') problems.push({ field: 'zeroLabel', message: 'is required for BINARY' });
    if (typeof r.oneLabel !== 'string') problems.push({ field: 'oneLabel', message: 'is required for BINARY' });
  } else if (r.type === 'MULTISTATE') {
    if (!Array.isArray(r.values)) problems.push({ field: 'values', message: 'is required for MULTISTATE' });
    else {
      const seen = new Set<number>();
      r.values.forEach((v, i) => {
        if (seen.has(v.key)) problems.push({ field: `values[${i}].key`, message: `state ${v.key} is named twice` });
        seen.add(v.key);
      });
    }
  }
  return problems;
}

/** Only the fields of the renderer's type (a stored renderer keeps nothing else). */
export function normaliseTextRenderer(r: TextRenderer): TextRenderer {
  switch (r.type) {
    case 'ANALOG':
      return { type: 'ANALOG', format: r.format };
    case 'BINARY':
      return { type: 'BINARY', zeroLabel: r.zeroLabel, oneLabel: r.oneLabel };
    case 'MULTISTATE':
      return { type: 'MULTISTATE', values: r.values.map((v) => ({ key: v.key, text: v.text })) };
    default:
      return PLAIN_RENDERER;
  }
}

/** Digits with "," between thousands. */
function grouped(digits: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** A finite number rounded to `decimals` places, half away from zero, as plain digits (no exponent). */
function fixed(value: number, decimals: number): string {
  // toFixed writes an exponent from 1e21 on: such numbers are whole at any precision we show.
  if (Math.abs(value) >= 1e21) return BigInt(Math.round(value)).toString() + (decimals > 0 ? '.' + '0'.repeat(decimals) : '');
  // toFixed rounds the binary value (1.005 → "1.00"); rounding the shortest decimal text instead gives "1.01", as people expect.
  const [mantissa = '0', exp = '0'] = Math.abs(value).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const point = Number(exp) + 1; // digits before the decimal point
  const keep = point + decimals;
  let whole: bigint;
  if (keep < 0) whole = 0n;
  else {
    const kept = digits.slice(0, keep).padEnd(keep, '0');
    whole = BigInt(kept === '' ? '0' : kept);
    if (Number(digits[keep] ?? '0') >= 5) whole += 1n;
  }
  let text = whole.toString().padStart(decimals + 1, '0');
  if (decimals > 0) text = `${text.slice(0, -decimals)}.${text.slice(-decimals)}`;
  return (value < 0 && /[1-9]/.test(text) ? '-' : '') + text;
}

function formatPattern(value: number, p: DecimalPattern): string {
  const text = fixed(value, p.maxFraction);
  const negative = text.startsWith('-');
  let [int = '0', frac = ''] = (negative ? text.slice(1) : text).split('.');
  while (frac.length > p.minFraction && frac.endsWith('0')) frac = frac.slice(0, -1);
  int = int.replace(/^0+/, '').padStart(Math.max(p.minInteger, 1), '0');
  if (p.grouping) int = grouped(int);
  return (negative ? '-' : '') + int + (frac === '' ? '' : '.' + frac);
}

/** PLAIN's numbers: 6 significant digits, but never fewer than the integer part's (1234567.8 → 1234568). */
export function plainNumber(value: number): string {
  if (!Number.isFinite(value) || Number.isInteger(value)) return String(value);
  const abs = Math.abs(value);
  if (abs < 1) return String(Number(value.toPrecision(6)));
  const integerDigits = Math.floor(Math.log10(abs)) + 1;
  return formatPattern(value, { minInteger: 1, minFraction: 0, maxFraction: Math.max(0, 6 - integerDigits), grouping: false });
}

/**
 * A value as text for people: `value` is the API's value (number, boolean, text; null: none, written
 * "—"). `unit` follows numbers (not labels); pass '' for a statistic without the unit (a count).
 */
export function renderValue(value: number | boolean | string | null, renderer: TextRenderer | undefined, unit = ''): string {
  if (value === null) return '—';
  const withUnit = (text: string) => (unit === '' ? text : `${text} ${unit}`);
  const r = renderer ?? PLAIN_RENDERER;
  if (typeof value === 'boolean') {
    if (r.type === 'BINARY') return value ? r.oneLabel : r.zeroLabel;
    return String(value);
  }
  if (typeof value === 'string') return value;
  if (r.type === 'MULTISTATE') {
    const state = r.values.find((v) => v.key === value);
    return state ? state.text : String(value);
  }
  if (r.type === 'BINARY') return value === 0 ? r.zeroLabel : r.oneLabel;
  if (r.type === 'ANALOG' && Number.isFinite(value)) {
    const p = parsePattern(r.format);
    if (typeof p !== 'string') return withUnit(formatPattern(value, p));
  }
  return withUnit(plainNumber(value));
}
