// Instants in requests: ISO 8601 with an explicit offset, or epoch milliseconds.
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** Epoch ms, or undefined when the value is neither a zoned ISO 8601 date nor an integer. */
export function parseInstant(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : undefined;
  const text = value.trim();
  if (/^-?\d{1,16}$/.test(text)) return Number(text);
  if (!ISO_WITH_OFFSET.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}
