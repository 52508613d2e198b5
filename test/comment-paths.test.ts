// Every file a comment cites exists. A cited path (a directory, a slash, a name ending .ts) is looked up
// relative to the citing file's directory and each directory above it up to the repository root, and
// to src/: in src/store/values/postgres/ a cite of the sibling engine's store (questdb, store.ts)
// resolves, in src/ anything under src/ does (store/unavailable.ts), in test/helpers/ its neighbours
// (helpers/log.ts), and a path from the root anywhere (src/core/rql/sql.ts). Comments are found by
// test/helpers/comments.ts (strings, templates and regular expressions are not comments); in SQL
// files, the `--` lines.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { projectRoot } from '../src/paths.js';
import { commentsOf } from './helpers/comments.js';

const SRC = join(projectRoot, 'src');
const CITED = /(?<![\w./-])[\w-]+\/[\w./-]*\w\.ts\b/g;

/**
 * Citations in files other helpers of issue 25 are rewriting; the lead empties this after merging
 * them. Each entry is "citing file (from the root): cited path".
 */
const ALLOWED_MISSING = new Set<string>([]);

function sourceFiles(dir: string, ext: RegExp): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'fixtures' ? [] : sourceFiles(path, ext);
    return ext.test(e.name) ? [path] : [];
  });
}

function tsComments(file: string): string[] {
  return commentsOf(readFileSync(file, 'utf8'));
}

function sqlComments(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((line) => {
      const at = line.indexOf('--');
      return at < 0 ? [] : [line.slice(at)];
    });
}

function resolves(file: string, cited: string): boolean {
  const bases = [SRC];
  for (let dir = dirname(file); dir.startsWith(projectRoot); dir = dirname(dir)) {
    bases.push(dir);
    if (dir === projectRoot) break;
  }
  return bases.some((base) => existsSync(join(base, cited)));
}

/** "citing file: cited path" for every citation in these files that names no file. */
function missingCitations(files: string[], comments: (file: string) => string[]): string[] {
  const missing: string[] = [];
  for (const file of files) {
    for (const comment of comments(file)) {
      for (const [cited] of comment.matchAll(CITED)) if (!resolves(file, cited)) missing.push(`${relative(projectRoot, file)}: ${cited}`);
    }
  }
  return missing;
}

describe('comments cite files that exist', () => {
  const roots = ['src', 'test', 'bench'].map((d) => join(projectRoot, d));

  it('in src/, test/ and bench/ (TypeScript comments, SQL -- lines)', () => {
    const missing = [
      ...missingCitations(
        roots.flatMap((r) => sourceFiles(r, /\.ts$/)),
        tsComments,
      ),
      ...missingCitations(sourceFiles(SRC, /\.sql$/), sqlComments),
    ];
    assert.deepEqual(
      missing.filter((m) => !ALLOWED_MISSING.has(m)),
      [],
    );
    // An allowed entry that no longer fails is taken off the list.
    assert.deepEqual(
      [...ALLOWED_MISSING].filter((m) => !missing.includes(m)),
      [],
      'ALLOWED_MISSING lists citations that now resolve: remove them',
    );
  });

  it('reads comments only: not strings, templates or regular expressions that hold // or /*', () => {
    const text = [
      "const a = 'http://x/a.ts'; // one",
      'const b = `//${"/*"}` + `${`//`}`; /* two */',
      'const c = /\\/\\/[/*]/.test(a) ? 4 / 2 / 1 : 0; // three',
      'if (x) { /* four */ } else { return /a\\/b/; } // five',
    ].join('\n');
    assert.deepEqual(commentsOf(text), ['// one', '/* two */', '// three', '/* four */', '// five']);
  });

  it('finds a citation that names no file (the check itself)', () => {
    const file = join(SRC, 'values', 'live', 'bus.ts');
    assert.equal(resolves(file, 'services/cluster.ts'), true);
    assert.equal(resolves(file, 'services/cluster-values.ts'), false);
    assert.equal(resolves(join(projectRoot, 'bench', 'lib', 'server.ts'), 'lib/bare-koa.ts'), true);
    assert.deepEqual([...'see store/values/types.ts, and src/core/rql/sql.ts; not x.ts nor a/b.js'.matchAll(CITED)].map((m) => m[0]), ['store/values/types.ts', 'src/core/rql/sql.ts']);
  });
});
