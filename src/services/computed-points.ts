// The rules of a computed point (a point of a META source): its locator checked and normalised at save
// (the script parsed against its context variables, the cron pattern, the delay), and its context
// checked against the stored points (each one exists, the saver may read it, it is not text, and no
// chain of computed points leads back to the point itself). A script that does not parse, an unknown
// context point and a cycle are all 422s naming the field.
import { Cron } from 'croner';
import { validationMessage, type ValidationMessage } from '../core/errors.js';
import { parseScript, ScriptSyntaxError, variableNameProblem, type HistoryCall } from '../core/meta-script/parse.js';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import { hasPermission, type Principal } from './permissions.js';

export type UpdateEvent = 'CONTEXT_UPDATE' | 'CRON';

export interface ContextEntry {
  xid: string;
  var: string;
}

/** A META point's locator as stored. */
export interface MetaLocator {
  script: string;
  context: ContextEntry[];
  updateEvent: UpdateEvent;
  cronPattern?: string;
  executionDelayMs: number;
}

const at = (field: string) => `pointLocator.${field}`;

/** Whether a cron pattern is one croner runs (5 fields, or 6 with seconds). */
export function cronProblem(pattern: string): string | undefined {
  try {
    new Cron(pattern, { paused: true }).stop();
    return undefined;
  } catch (err) {
    return `is not a cron pattern: ${(err as Error).message.replace(/^CronPattern: /, '')}`;
  }
}

/** The locator to store for a META point (schema point-locator-meta already passed), with its rule violations in `problems`. */
export function metaLocator(loc: Record<string, unknown>, problems: ValidationMessage[]): MetaLocator {
  const context = (loc.context as ContextEntry[]).map((c) => ({ xid: c.xid, var: c.var }));
  const names = new Set<string>();
  context.forEach((c, i) => {
    const problem = variableNameProblem(c.var);
    if (problem) problems.push(validationMessage(at(`context[${i}].var`), problem));
    else if (names.has(c.var)) problems.push(validationMessage(at(`context[${i}].var`), `"${c.var}" is bound twice`));
    names.add(c.var);
  });
  const script = loc.script as string;
  try {
    parseScript(script, names);
  } catch (err) {
    if (!(err instanceof ScriptSyntaxError)) throw err;
    problems.push(validationMessage(at('script'), err.message));
  }
  const updateEvent = (loc.updateEvent as UpdateEvent | undefined) ?? 'CONTEXT_UPDATE';
  const out: MetaLocator = { script, context, updateEvent, executionDelayMs: (loc.executionDelayMs as number | undefined) ?? 0 };
  const cronPattern = loc.cronPattern as string | undefined;
  if (cronPattern !== undefined) {
    out.cronPattern = cronPattern;
    const problem = cronProblem(cronPattern);
    if (problem) problems.push(validationMessage(at('cronPattern'), problem));
  } else if (updateEvent === 'CRON') problems.push(validationMessage(at('cronPattern'), 'is required when updateEvent is CRON'));
  if (updateEvent === 'CONTEXT_UPDATE' && context.length === 0) problems.push(validationMessage(at('context'), 'needs at least one point when updateEvent is CONTEXT_UPDATE'));
  return out;
}

/** The points a check looks up, by XID (the point service, or the repository of an import's transaction). */
export type PointsByXid = (xids: readonly string[]) => Promise<Map<string, DataPointRecord>>;

/** How many computed points a cycle check follows at most (a longer chain is refused as one). */
const MAX_CHAIN_POINTS = 10_000;

/**
 * Checks a META point's context against the stored points: each exists and `user` may read it (else
 * "not found", which tells nothing of points the user cannot see), none is ALPHANUMERIC, and no chain of
 * computed points through the context leads back to `selfXid`. Returns the problems.
 */
export async function contextProblems(user: Principal, selfXid: string, locator: Pick<MetaLocator, 'script' | 'context'>, find: PointsByXid): Promise<ValidationMessage[]> {
  const { context } = locator;
  const problems: ValidationMessage[] = [];
  const found = await find([...new Set(context.map((c) => c.xid))]);
  context.forEach((c, i) => {
    const field = at(`context[${i}].xid`);
    const p = found.get(c.xid);
    if (c.xid === selfXid) problems.push(validationMessage(field, `is the point itself: a computed point cannot be its own context`));
    else if (!p || !hasPermission(user, p.readPermission)) problems.push(validationMessage(field, `Data point not found: ${c.xid}`));
    else if (p.dataType === 'ALPHANUMERIC') problems.push(validationMessage(field, 'must be a NUMERIC, BINARY or MULTISTATE point'));
  });
  if (problems.length > 0) return problems;
  for (const h of historyCalls(locator)) {
    const p = found.get(context.find((c) => c.var === h.variable)!.xid)!;
    if (h.fn !== 'last' && p.dataType !== 'NUMERIC') problems.push(validationMessage(at('script'), `${h.fn}(${h.variable}, …) needs a NUMERIC point: ${p.xid} is ${p.dataType} (last works for any)`));
  }
  if (problems.length > 0) return problems;
  const cycle = await cycleThrough(selfXid, [...found.values()], find);
  if (cycle) problems.push(validationMessage(at('context'), `makes a cycle of computed points: ${[selfXid, ...cycle].join(' → ')}`));
  return problems;
}

/**
 * The chain of XIDs from one of `start` back to `selfXid` through the context of computed points, if
 * there is one: a breadth-first walk, each level's points read in one lookup.
 */
async function cycleThrough(selfXid: string, start: readonly DataPointRecord[], find: PointsByXid): Promise<string[] | undefined> {
  const cameFrom = new Map<string, string | undefined>();
  let level = start.filter(isComputed);
  for (const p of level) cameFrom.set(p.xid, undefined);
  while (level.length > 0) {
    const next = new Set<string>();
    for (const p of level) {
      for (const c of (p.pointLocator.context as ContextEntry[] | undefined) ?? []) {
        if (c.xid === selfXid) return chain(cameFrom, p.xid).concat(selfXid);
        if (!cameFrom.has(c.xid)) {
          cameFrom.set(c.xid, p.xid);
          next.add(c.xid);
        }
      }
    }
    if (cameFrom.size > MAX_CHAIN_POINTS) return [`… (more than ${MAX_CHAIN_POINTS} computed points)`];
    level = next.size === 0 ? [] : [...(await find([...next])).values()].filter(isComputed);
  }
  return undefined;
}

/** The script's history calls (none when it does not parse: that is reported at the script already). */
function historyCalls(locator: Pick<MetaLocator, 'script' | 'context'>): HistoryCall[] {
  try {
    return parseScript(locator.script, new Set(locator.context.map((c) => c.var))).history;
  } catch {
    return [];
  }
}

function isComputed(p: DataPointRecord): boolean {
  return p.dataSourceType === 'META';
}

function chain(cameFrom: ReadonlyMap<string, string | undefined>, last: string): string[] {
  const xids = [last];
  for (let x = cameFrom.get(last); x !== undefined; x = cameFrom.get(x)) xids.unshift(x);
  return xids;
}
