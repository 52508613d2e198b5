// One measured figure, always next to a baseline measured in the same run, and how both are printed.
import { cpus, loadavg, platform, release, totalmem } from 'node:os';

export interface Figure {
  /** Benchmark module name (startup, login, requests, …). */
  bench: string;
  /** What was measured, e.g. "first start (initdb)". */
  metric: string;
  value: number;
  unit: string;
  /** What the figure is compared with, measured in the same run on the same machine. */
  baseline: string;
  baselineValue: number;
  /** value ÷ baselineValue. */
  ratio: number;
  /** Anything the reader needs to interpret the figure (runs, errors, …). */
  note?: string;
}

export function figure(bench: string, metric: string, value: number, unit: string, baseline: string, baselineValue: number, note?: string): Figure {
  return { bench, metric, value, unit, baseline, baselineValue, ratio: baselineValue === 0 ? NaN : value / baselineValue, note };
}

function fmt(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Math.abs(n) >= 1000) return Math.round(n).toLocaleString('en-US');
  if (Math.abs(n) >= 100) return n.toFixed(0);
  if (Math.abs(n) >= 10) return n.toFixed(1);
  return n.toFixed(2);
}

function ratio(n: number): string {
  if (!Number.isFinite(n)) return '—';
  return n >= 100 ? `${n.toFixed(0)}×` : n >= 10 ? `${n.toFixed(1)}×` : `${n.toFixed(2)}×`;
}

export function machineLine(): string {
  const cpu = cpus();
  return `node ${process.version}, ${platform()} ${release()}, ${cpu.length} × ${cpu[0]?.model.trim() ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB`;
}

/** Other work on the machine skews every figure (the baselines too): say how busy it was. */
export function loadLine(): string {
  return `load average ${loadavg().map((n) => n.toFixed(2)).join(' ')} (1, 5, 15 min) on ${cpus().length} cores`;
}

export function printTable(figures: readonly Figure[]): void {
  const header = ['bench', 'metric', 'value', 'unit', 'baseline', 'baseline value', 'ratio', 'note'];
  const rows = figures.map((f) => [f.bench, f.metric, fmt(f.value), f.unit, f.baseline, fmt(f.baselineValue), ratio(f.ratio), f.note ?? '']);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const numeric = new Set([2, 5, 6]);
  const line = (cells: string[]) =>
    '| ' + cells.map((c, i) => (numeric.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(' | ') + ' |';
  console.log(line(header));
  console.log('|' + widths.map((w, i) => (numeric.has(i) ? '-'.repeat(w + 1) + ':' : '-'.repeat(w + 2))).join('|') + '|');
  for (const r of rows) console.log(line(r));
}

export function printJsonLines(figures: readonly Figure[]): void {
  for (const f of figures) {
    const round = (n: number) => (Number.isFinite(n) ? Math.round(n * 1000) / 1000 : null);
    console.log(
      JSON.stringify({
        bench: f.bench,
        metric: f.metric,
        value: round(f.value),
        unit: f.unit,
        baseline: f.baseline,
        baseline_value: round(f.baselineValue),
        ratio: round(f.ratio),
        ...(f.note ? { note: f.note } : {}),
      }),
    );
  }
}
