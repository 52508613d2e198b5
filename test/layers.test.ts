// The layering of src/: a module imports only from its own layer or a lower one, so the core knows
// nothing of Koa and a store never reaches up into a service. A new upward import fails here.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { projectRoot } from '../src/paths.js';

const SRC = join(projectRoot, 'src');

/** Rank of each layer: imports may point to the same layer or a lower rank. */
// values/ (the point-value domain) sits between the stores it uses and the services that use it.
const RANK: Record<string, number> = { core: 0, config: 0, paths: 0, store: 1, values: 1.5, services: 2, runtime: 3, http: 3, api: 4, root: 5 };

function layerOf(file: string): string {
  const [top, ...rest] = relative(SRC, file).split('/');
  if (rest.length === 0) {
    const name = top!.replace(/\.ts$/, '');
    return name === 'config' || name === 'paths' ? name : 'root';
  }
  return top!;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

function relativeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)].map((m) => resolve(dirname(file), m[1]!.replace(/\.js$/, '.ts')));
}

/** Each import or re-export of a relative module: the statement's text (up to its path) and the file it names. */
function importStatements(file: string): { statement: string; target: string }[] {
  const text = readFileSync(file, 'utf8');
  const statements = [...text.matchAll(/^\s*((?:import|export)\b[^;]*?(?:from\s*)?'(\.[^']+)')/gm)];
  const dynamic = [...text.matchAll(/(import\s*\(\s*'(\.[^']+)')/g)];
  return [...statements, ...dynamic].map((m) => ({ statement: m[1]!, target: resolve(dirname(file), m[2]!.replace(/\.js$/, '.ts')) }));
}

describe('source layers', () => {
  const files = sourceFiles(SRC);

  it('knows the layer of every source file', () => {
    for (const f of files) assert.ok(layerOf(f) in RANK, `no layer for ${relative(SRC, f)}`);
  });

  it('has no import from a lower layer to a higher one, nor across http and runtime', () => {
    const bad: string[] = [];
    for (const f of files) {
      const from = layerOf(f);
      for (const target of relativeImports(f)) {
        const to = layerOf(target);
        if (from === to) continue;
        if (RANK[to]! > RANK[from]! || (RANK[to] === RANK[from] && RANK[from]! > 0))
          bad.push(`${relative(SRC, f)} (${from}) imports ${relative(SRC, target)} (${to})`);
      }
    }
    assert.deepEqual(bad, []);
  });

  it('lets api take only types from store (values reach it through values/ and services/)', () => {
    const bad: string[] = [];
    for (const f of files.filter((file) => layerOf(file) === 'api')) {
      for (const { statement, target } of importStatements(f)) {
        if (layerOf(target) === 'store' && !/^(import|export)\s+type\s/.test(statement)) bad.push(`${relative(SRC, f)}: ${statement.replace(/\s+/g, ' ')}`);
      }
    }
    assert.deepEqual(bad, []);
  });

  it('keeps Koa out of core, store, values, services and runtime', () => {
    const koaUsers = files.filter((f) => ['core', 'store', 'values', 'services', 'runtime'].includes(layerOf(f)) && /from '(koa|@koa\/router|koa-static)'/.test(readFileSync(f, 'utf8')));
    assert.deepEqual(koaUsers.map((f) => relative(SRC, f)), []);
  });
});
