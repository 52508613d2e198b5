// The interpreter of a checked script (parse.ts): a walk over its tree with numbers only. A result
// that is not a finite number (a division by zero, the square root of a negative, an overflow) is a
// run-time error, as is a context variable without a value or a history window without data: the
// computed point gets a warning and no value, never Infinity or NaN.
import { MATH_FUNCTIONS, type Expr, type HistoryCall, type Script } from './parse.js';

export class ScriptRuntimeError extends Error {}

/** What one evaluation reads: each variable's current value, and each history call's result (null: no data). */
export interface ScriptInputs {
  variables: ReadonlyMap<string, number>;
  history: readonly (number | null)[];
}

export function evaluate(script: Script, inputs: ScriptInputs): number {
  return new Evaluation(script.history, inputs).run(script.root);
}

const HISTORY_WORDS: Record<HistoryCall['fn'], string> = { avg: 'average', min: 'minimum', max: 'maximum', last: 'last value', delta: 'delta' };

function windowText(ms: number): string {
  for (const [unit, size] of [['w', 604_800_000], ['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1_000]] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

class Evaluation {
  constructor(
    private readonly calls: readonly HistoryCall[],
    private readonly inputs: ScriptInputs,
  ) {}

  run(e: Expr): number {
    switch (e.k) {
      case 'num':
        return e.v;
      case 'var': {
        const v = this.inputs.variables.get(e.name);
        if (v === undefined) throw new ScriptRuntimeError(`${e.name} has no value yet`);
        return v;
      }
      case 'unary': {
        const v = this.run(e.arg);
        return e.op === '-' ? -v : e.op === '+' ? v : v === 0 ? 1 : 0;
      }
      case 'logical': {
        const left = this.run(e.left) !== 0;
        if (e.op === '&&') return left && this.run(e.right) !== 0 ? 1 : 0;
        return left || this.run(e.right) !== 0 ? 1 : 0;
      }
      case 'cond':
        return this.run(e.test) !== 0 ? this.run(e.then) : this.run(e.otherwise);
      case 'binary':
        return this.binary(e.op, this.run(e.left), this.run(e.right));
      case 'math': {
        const args = e.args.map((a) => this.run(a));
        return finite(MATH_FUNCTIONS.get(e.fn)!.apply(args), `${e.fn}(${args.join(', ')})`);
      }
      case 'history': {
        const v = this.inputs.history[e.index];
        const call = this.calls[e.index]!;
        if (v === null || v === undefined) throw new ScriptRuntimeError(`${call.fn}(${call.variable}, "${windowText(call.windowMs)}"): no values of ${call.variable} in the window`);
        return finite(v, `the ${HISTORY_WORDS[call.fn]} of ${call.variable}`);
      }
    }
  }

  private binary(op: Extract<Expr, { k: 'binary' }>['op'], a: number, b: number): number {
    switch (op) {
      case '+':
        return finite(a + b, `${a} + ${b}`);
      case '-':
        return finite(a - b, `${a} - ${b}`);
      case '*':
        return finite(a * b, `${a} * ${b}`);
      case '/':
        if (b === 0) throw new ScriptRuntimeError(`division by zero (${a} / 0)`);
        return finite(a / b, `${a} / ${b}`);
      case '%':
        if (b === 0) throw new ScriptRuntimeError(`division by zero (${a} % 0)`);
        return finite(a % b, `${a} % ${b}`);
      case '**':
        return finite(a ** b, `${a} ** ${b}`);
      case '==':
        return a === b ? 1 : 0;
      case '!=':
        return a !== b ? 1 : 0;
      case '<':
        return a < b ? 1 : 0;
      case '<=':
        return a <= b ? 1 : 0;
      case '>':
        return a > b ? 1 : 0;
      case '>=':
        return a >= b ? 1 : 0;
    }
  }
}

function finite(v: number, what: string): number {
  if (!Number.isFinite(v)) throw new ScriptRuntimeError(`${what} is not a finite number`);
  return v;
}
