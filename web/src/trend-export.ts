// Downloads of what the trend shows: CSV of the plotted series (ISO times, one column per point, empty
// where a point has no value at that time) and PNG of the chart canvas (axes included) with a title
// and the legend drawn under it, since uPlot's legend is HTML, not part of the canvas.

export interface ExportSeries {
  /** Column heading and legend text, e.g. "Boiler temperature (°C)". */
  label: string;
  color: string;
  values: (number | null)[];
}

/** A CSV field, quoted when it holds a comma, quote or line break (RFC 4180). */
function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function trendCsv(times: number[], series: ExportSeries[]): string {
  const lines = [['time', ...series.map((s) => s.label)].map(csvField).join(',')];
  times.forEach((t, i) => {
    lines.push([new Date(t).toISOString(), ...series.map((s) => (s.values[i] === null || s.values[i] === undefined ? '' : String(s.values[i])))].join(','));
  });
  return lines.join('\r\n') + '\r\n';
}

/** Lets the browser save `blob` as `filename` (a temporary link, clicked). */
export function download(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  // The download has its own copy once started; the URL is only needed for the click.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

const FONT = '13px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
const TITLE_FONT = `bold ${FONT}`;

/** The chart canvas (device pixels) under `title`, with the legend below: a PNG. */
export function trendPng(chart: HTMLCanvasElement, title: string, series: ExportSeries[]): Promise<Blob> {
  const scale = chart.width / Math.max(1, chart.clientWidth || chart.width);
  const pad = 10 * scale;
  const line = 20 * scale;
  // Legend entries flow left to right and wrap at the canvas width.
  const measure = document.createElement('canvas').getContext('2d')!;
  measure.font = FONT;
  const entries: { x: number; row: number; s: ExportSeries }[] = [];
  let x = pad;
  let row = 0;
  for (const s of series) {
    const width = (measure.measureText(s.label).width + 34) * scale;
    if (x + width > chart.width - pad && x > pad) {
      x = pad;
      row++;
    }
    entries.push({ x, row, s });
    x += width;
  }
  const top = pad + line;
  const legendTop = top + chart.height + pad;
  const out = document.createElement('canvas');
  out.width = chart.width;
  out.height = Math.ceil(legendTop + (row + 1) * line + pad);
  const ctx = out.getContext('2d')!;
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, out.width, out.height);
  ctx.scale(scale, scale);
  ctx.fillStyle = '#1d2733';
  ctx.textBaseline = 'middle';
  ctx.font = TITLE_FONT;
  ctx.fillText(title, pad / scale, (pad + line / 2) / scale);
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.drawImage(chart, 0, top);
  ctx.scale(scale, scale);
  ctx.font = FONT;
  for (const { x: ex, row: r, s } of entries) {
    const y = (legendTop + r * line + line / 2) / scale;
    ctx.fillStyle = s.color;
    ctx.fillRect(ex / scale, y - 2, 18, 4);
    ctx.fillStyle = '#1d2733';
    ctx.fillText(s.label, ex / scale + 24, y);
  }
  return new Promise((resolve, reject) => out.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('The browser could not make the PNG'))), 'image/png'));
}

/** "2026-11-27T10-31-00" for file names (no colons, which some systems refuse). */
export function fileStamp(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace(/:/g, '-');
}
