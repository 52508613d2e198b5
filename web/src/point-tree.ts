// Finding a point without reading the whole list: the readable points as a tree, by data source and
// device (the point's deviceName, which defaults to its source's name) or by tag (key, then value).
// Each branch lists its points in the points list below (an RQL filter the operator can read and
// change); a point's own button lists that point alone. Branches are closed <details>, so the tree
// stays a few lines tall however many points there are.
import { get, rqlValue, type DataPoint, type List } from './api.js';
import { h, say, sayError } from './dom.js';

/** The points read for the tree: enough for a site; past it the tree says it shows a part. */
const TREE_MAX_POINTS = 5_000;

export type TreeMode = 'device' | 'tag';

export interface PointTree {
  refresh(): Promise<void>;
}

/** A group of points under a label, with the filter that lists them. */
interface Branch {
  label: string;
  rql: string;
  points: DataPoint[];
  children: Branch[];
}

function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

const byLabel = (a: Branch, b: Branch) => a.label.localeCompare(b.label);

/** Source → device → points. */
export function deviceBranches(points: readonly DataPoint[]): Branch[] {
  return [...groupBy(points, (p) => p.dataSourceXid)]
    .map(([xid, ofSource]) => {
      const source = `eq(dataSourceXid,${rqlValue(xid)})`;
      return {
        label: ofSource[0]!.dataSourceName ?? xid,
        rql: `${source}&sort(deviceName,name)`,
        points: [],
        children: [...groupBy(ofSource, (p) => p.deviceName)]
          .map(([device, ofDevice]) => ({ label: device || '(no device)', rql: `${source}&eq(deviceName,${rqlValue(device)})&sort(name)`, points: ofDevice, children: [] }))
          .sort(byLabel),
      };
    })
    .sort(byLabel);
}

/** Tag key → value → points (a point is under each of its tags). */
export function tagBranches(points: readonly DataPoint[]): Branch[] {
  const pairs = points.flatMap((p) => Object.entries(p.tags ?? {}).map(([key, value]) => ({ key, value, p })));
  return [...groupBy(pairs, (t) => t.key)]
    .map(([key, ofKey]) => ({
      label: key,
      rql: '',
      points: [],
      children: [...groupBy(ofKey, (t) => t.value)]
        .map(([value, ofValue]) => ({ label: value, rql: `eq(tags.${rqlValue(key)},${rqlValue(value)})&sort(name)`, points: ofValue.map((t) => t.p), children: [] }))
        .sort(byLabel),
    }))
    .sort(byLabel);
}

function count(b: Branch): number {
  return b.points.length + b.children.reduce((n, c) => n + count(c), 0);
}

/** `show(rql)` lists the points a branch or leaf stands for. */
export function pointTree(container: HTMLElement, status: HTMLElement, show: (rql: string) => void): PointTree {
  let mode: TreeMode = 'device';
  let points: DataPoint[] = [];
  const modeButtons = [...container.querySelectorAll<HTMLButtonElement>('button[data-tree-mode]')];
  const tree = container.querySelector<HTMLElement>('.tree')!;

  function branchNode(b: Branch, depth: number): HTMLElement {
    const n = count(b);
    const content: HTMLElement[] = [];
    if (b.rql !== '') {
      content.push(
        h('button', { type: 'button', class: 'tree-list', onclick: () => show(b.rql) }, `List ${n === 1 ? 'its point' : `all ${n}`}`, h('span', { class: 'sr-only' }, ` of ${b.label}`)),
      );
    }
    if (b.children.length > 0) content.push(h('ul', {}, ...b.children.map((c) => h('li', {}, branchNode(c, depth + 1)))));
    if (b.points.length > 0) {
      content.push(
        h(
          'ul',
          { class: 'tree-points' },
          ...b.points.map((p) =>
            h('li', {}, h('button', { type: 'button', class: 'link', onclick: () => show(`eq(xid,${rqlValue(p.xid)})`), 'data-xid': p.xid }, p.name, h('span', { class: 'sr-only' }, ` (${b.label})`))),
          ),
        ),
      );
    }
    return h('details', { 'data-depth': depth }, h('summary', {}, b.label, ' ', h('span', { class: 'muted' }, `(${n})`)), ...content);
  }

  function render(): void {
    for (const b of modeButtons) b.setAttribute('aria-pressed', String(b.dataset.treeMode === mode));
    const branches = mode === 'device' ? deviceBranches(points) : tagBranches(points);
    tree.replaceChildren(...branches.map((b) => h('li', {}, branchNode(b, 0))));
    if (branches.length === 0) tree.append(h('li', { class: 'muted' }, mode === 'tag' ? 'No point has tags.' : 'No points.'));
  }

  for (const b of modeButtons) {
    b.addEventListener('click', () => {
      mode = b.dataset.treeMode === 'tag' ? 'tag' : 'device';
      render();
    });
  }

  return {
    async refresh() {
      try {
        const list = await get<List<DataPoint>>(`/data-points?sort(name)&limit(${TREE_MAX_POINTS})`);
        points = list.items;
        render();
        say(status, list.total > list.items.length ? `The first ${list.items.length} of ${list.total} points` : '');
      } catch (err) {
        sayError(status, err);
      }
    },
  };
}
