// Where the project's non-code files live, the same whether we run from src/ (tsx) or dist/src/ (tsc).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findProjectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package.json not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
  return dir;
}

export const projectRoot = findProjectRoot();
export const schemasDir = join(projectRoot, 'schemas');
export const migrationsDir = join(projectRoot, 'src', 'store', 'metadata', 'migrations');
