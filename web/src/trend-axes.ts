// The axes of the trend chart. Time (x): labels chosen for the tick step (seconds only when ticks are
// seconds apart, the date under the first tick of each day, days alone beyond a day) and ticks kept
// further apart than the widest label, so labels never run into each other at any width. Values (y):
// one axis per unit, shared by the points with that unit, alternately left and right, each in the
// colour of its first point when there are several.
import type uPlot from 'uplot';

/** The x axis font, named so that the labels' widths can be measured (tests do). */
export const X_AXIS_FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
/** Room per x tick in CSS pixels: the widest label ("23:59:59", "27 Nov") is about 55 px. */
const X_SPACE = 90;
const DAY_MS = 86_400_000;

const pad = (n: number) => String(n).padStart(2, '0');

function dayOf(ms: number): string {
  return new Date(ms).toLocaleDateString(undefined, { day: 'numeric', month: 'short' });
}

/** Tick labels for ticks `step` ms apart (in the browser's zone). */
export function timeLabels(ticks: number[], step: number): string[] {
  let lastDay = '';
  return ticks.map((t) => {
    const d = new Date(t);
    const day = dayOf(t);
    if (step >= DAY_MS) return day;
    const time = step < 60_000 ? `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}` : `${pad(d.getHours())}:${pad(d.getMinutes())}`;
    const withDay = day !== lastDay;
    lastDay = day;
    return withDay ? `${time}\n${day}` : time;
  });
}

/**
 * The time axis. `onTicks` hears where each label went (CSS px from the plot's left, and its text), so
 * that the page can expose them for tests.
 */
export function timeAxis(onTicks: (ticks: { x: number; label: string }[]) => void): uPlot.Axis {
  return {
    space: X_SPACE,
    font: X_AXIS_FONT,
    size: 50,
    values: (u, splits, _axis, _space, incr) => {
      const labels = timeLabels(splits, incr);
      onTicks(splits.map((s, i) => ({ x: Math.round(u.valToPos(s, 'x')), label: labels[i]! })));
      return labels;
    },
  };
}

export interface UnitScales {
  /** The scale key of each series (in the order of the points). */
  scaleOf: string[];
  axes: uPlot.Axis[];
  /** The units in axis order ('' for points without one). */
  units: string[];
}

/** One y scale and axis per unit, in the order the units first appear among the points. */
export function unitScales(pointUnits: string[], colors: string[]): UnitScales {
  const units: string[] = [];
  for (const unit of pointUnits) if (!units.includes(unit)) units.push(unit);
  const keyOf = (unit: string) => `y:${unit}`;
  const several = units.length > 1;
  const axes = units.map((unit, i): uPlot.Axis => {
    const color = colors[pointUnits.indexOf(unit)]!;
    return {
      scale: keyOf(unit),
      side: i % 2 === 0 ? 3 : 1,
      // No label at all on a lone axis without unit (an empty one would still take its room).
      ...(unit !== '' ? { label: unit } : several ? { label: 'no unit' } : {}),
      size: 56,
      // One grid is enough; the other axes' lines would cross it.
      grid: { show: i === 0 },
      ...(several ? { stroke: color } : {}),
    };
  });
  return { scaleOf: pointUnits.map(keyOf), axes, units };
}
