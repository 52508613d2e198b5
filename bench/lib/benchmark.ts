// What a benchmark module exports. Register new ones in bench/benchmarks.ts.
import type { Figure } from './report.js';

export interface Benchmark {
  /** Short name, used on the command line: `npm run bench -- <name> …`. */
  name: string;
  description: string;
  /** Measures, printing progress with `progress()`, and returns its figures (each with a baseline). */
  run(): Promise<Figure[]>;
}

export function progress(message: string): void {
  console.log(`  · ${message}`);
}
