// The computed points' script language (src/core/meta-script/): what it computes, what it refuses at
// parse time (with the place), what fails at run time, and a fuzz run that no input escapes: every
// random text is either refused with a ScriptSyntaxError or evaluates to a finite number or a
// ScriptRuntimeError, never anything else, and nothing in the process changes.
import assert from 'node:assert/strict';
import { evaluate, ScriptRuntimeError } from '../src/core/meta-script/evaluate.js';
import { MAX_DEPTH, MAX_SCRIPT_LENGTH, parseScript, ScriptSyntaxError, variableNameProblem, windowMs } from '../src/core/meta-script/parse.js';

const VARS = new Set(['heat', 'power', 'x', 'y']);
const VALUES = new Map([
  ['heat', 12],
  ['power', 4],
  ['x', 2],
  ['y', 0],
]);

function run(text: string, history: (number | null)[] = []): number {
  const s = parseScript(text, VARS);
  return evaluate(s, { variables: VALUES, history: history.length > 0 ? history : s.history.map(() => 7) });
}

function refused(text: string, message: RegExp): ScriptSyntaxError {
  try {
    parseScript(text, VARS);
  } catch (err) {
    assert.ok(err instanceof ScriptSyntaxError, `${text}: ${String(err)}`);
    assert.match(err.message, message, text);
    return err;
  }
  assert.fail(`${text} was not refused`);
}

describe('computed point scripts', () => {
  it('computes arithmetic, comparisons, logic, conditionals and math functions over the context variables', () => {
    assert.equal(run('heat / power'), 3);
    assert.equal(run('heat % 5 + 2 ** 3 ** 2 - -x'), 2 + 512 + 2);
    assert.equal(run('heat > power && !(x == 3) ? 1 : 0'), 1);
    assert.equal(run('y || x < 1'), 0);
    assert.equal(run('true + false'), 1);
    assert.equal(run('round(sqrt(heat * 3)) + abs(-x) + min(heat, power, 1) + max(x, y) + pow(x, 3) + clamp(heat, 0, 10)'), 6 + 2 + 1 + 2 + 8 + 10);
    assert.equal(run('log10(1000) + floor(2.7) + ceil(2.1) + trunc(-2.5) + sign(-3)'), 3 + 2 + 3 - 2 - 1);
    assert.ok(Math.abs(run('sin(0) + cos(0) + atan2(1, 1) * 4') - (1 + Math.PI)) < 1e-12);
  });

  it('reads history functions as listed calls, one per distinct call; last(x) is the current value', () => {
    const s = parseScript('avg(heat, "15m") - min(heat, "1h") + max(heat, "1h") + delta(power, "2d") + last(x, "30s") + avg(heat, "15m") + last(x)', VARS);
    assert.deepEqual(s.history, [
      { fn: 'avg', variable: 'heat', windowMs: 900_000 },
      { fn: 'min', variable: 'heat', windowMs: 3_600_000 },
      { fn: 'max', variable: 'heat', windowMs: 3_600_000 },
      { fn: 'delta', variable: 'power', windowMs: 172_800_000 },
      { fn: 'last', variable: 'x', windowMs: 30_000 },
    ]);
    assert.equal(evaluate(s, { variables: VALUES, history: [10, 1, 20, 5, 3] }), 10 - 1 + 20 + 5 + 3 + 10 + 2);
    // min and max of two numbers stay Math's
    assert.deepEqual(parseScript('min(heat, 1)', VARS).history, []);
    assert.equal(windowMs('500ms'), 500);
    assert.equal(windowMs('1w'), 604_800_000);
    assert.equal(windowMs('367d'), undefined);
  });

  it('refuses member access, this, unknown names and functions, assignment, strings, arrays and sequences, saying where', () => {
    refused('x.constructor', /property access/);
    refused('x["constructor"]', /property access/);
    refused('heat.constructor.constructor("return process")()', /property access|only the listed functions/);
    refused('this', /"this" is not allowed/);
    refused('constructor', /unknown name "constructor"/);
    refused('__proto__', /unknown name "__proto__"/);
    assert.equal(refused('heat + process', /unknown name "process"/).index, 7);
    assert.equal(refused('heat + eval(1)', /unknown function "eval"/).index, 7);
    refused('require("fs")', /unknown function "require"/);
    refused('Function("return 1")', /unknown function "Function"/);
    refused('x = 1', /Unexpected "="/);
    refused('x += 1', /Expected expression after \+/);
    refused('x++', /missing unaryOp argument/);
    assert.equal(run('++x'), 2, '++x is +(+x): no increment');
    refused('"text"', /a string is only allowed as the window/);
    refused('[1, 2]', /an array is not allowed/);
    refused('x; y', /single expression/);
    refused('x, y', /single expression/);
    refused('x | 1', /operator \| is not allowed/);
    refused('~x', /operator ~ is not allowed/);
    refused('x === 1', /operator === is not allowed/);
    refused('null', /null is not allowed/);
    refused('sqrt', /is a function: call it/);
    refused('sqrt(1, 2)', /sqrt takes 1 argument/);
    refused('avg(x)', /avg is called as avg\(x, "15m"\)/);
    refused('avg(2 * x, "1h")', /avg is called as/);
    refused('avg(x, "fortnight")', /is not a window/);
    refused('avg(z, "1h")', /unknown name "z"/);
    refused('(x', /Expected|Unclosed/);
    refused('', /is empty/);
  });

  it('bounds the length, the nesting and the size of a script', () => {
    refused('x+'.repeat(MAX_SCRIPT_LENGTH) + 'x', new RegExp(`longer than ${MAX_SCRIPT_LENGTH}`));
    refused('('.repeat(MAX_DEPTH + 1) + 'x' + ')'.repeat(MAX_DEPTH + 1), /nests deeper/);
    refused('-'.repeat(200) + 'x', /nests deeper/);
    refused('!'.repeat(1_999) + 'x', /nests deeper/);
    refused('x+'.repeat(300) + 'x', /nests deeper|more than/);
    // a balanced tree of 256 leaves (511 terms) is shallow and short enough, but too big
    const balanced = (n: number): string => (n === 1 ? 'x' : `(${balanced(n / 2)})+(${balanced(n / 2)})`);
    assert.ok(balanced(256).length < MAX_SCRIPT_LENGTH);
    refused(balanced(256), /more than 500 terms/);
    assert.equal(run(balanced(128)), 256);
    assert.equal(run(Array.from({ length: 20 }, () => 'x').join('+')), 40);
  });

  it('makes a division by zero, a non-finite result, a variable without a value and an empty window run-time errors', () => {
    assert.throws(() => run('heat / y'), (e: unknown) => e instanceof ScriptRuntimeError && /division by zero/.test(e.message));
    assert.throws(() => run('heat % y'), /division by zero/);
    assert.throws(() => run('sqrt(-heat)'), /not a finite number/);
    assert.throws(() => run('log(y)'), /not a finite number/);
    assert.throws(() => run('10 ** 400'), /not a finite number/);
    const s = parseScript('heat + power', VARS);
    assert.throws(() => evaluate(s, { variables: new Map([['heat', 1]]), history: [] }), /power has no value yet/);
    assert.throws(() => run('avg(heat, "15m")', [null]), /no values of heat in the window/);
    // only the branch taken is evaluated
    assert.equal(run('y == 0 ? 0 : heat / y'), 0);
  });

  it('names only word-like, unreserved context variables', () => {
    assert.equal(variableNameProblem('heat_2'), undefined);
    assert.match(variableNameProblem('2heat')!, /must be a letter/);
    assert.match(variableNameProblem('a.b')!, /must be a letter/);
    assert.match(variableNameProblem('avg')!, /reserved word or a function name/);
    assert.match(variableNameProblem('true')!, /reserved/);
  });

  it('fuzz: random texts are refused or computed, never anything else', function () {
    this.timeout(60_000);
    const pieces = ['x', 'y', 'heat', 'power', '1', '0', '2.5', '1e308', '+', '-', '*', '/', '%', '**', '(', ')', '?', ':', '&&', '||', '!', '==', '<', '>=', ',', '.', '[', ']', '"15m"', "'1h'", 'avg(', 'min(', 'sqrt(', 'constructor', '__proto__', 'this', 'process', '=', ';', '`', '\\', '{', '}', 'x.y', ' ', 'true', 'new ', '=>', 'eval(', 'Function'];
    let seed = 12345;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    const before = Object.getOwnPropertyNames(Object.prototype).join();
    let parsed = 0;
    for (let i = 0; i < 20_000; i++) {
      const n = 1 + Math.floor(random() * 12);
      let text = '';
      for (let j = 0; j < n; j++) text += pieces[Math.floor(random() * pieces.length)];
      let script;
      try {
        script = parseScript(text, VARS);
      } catch (err) {
        assert.ok(err instanceof ScriptSyntaxError, `${JSON.stringify(text)} threw ${String(err)}`);
        continue;
      }
      parsed++;
      try {
        const v = evaluate(script, { variables: VALUES, history: script.history.map(() => 1) });
        assert.ok(Number.isFinite(v), `${text} gave ${v}`);
      } catch (err) {
        assert.ok(err instanceof ScriptRuntimeError, `${JSON.stringify(text)} failed with ${String(err)}`);
      }
    }
    assert.equal(Object.getOwnPropertyNames(Object.prototype).join(), before, 'Object.prototype unchanged');
    assert.ok(parsed > 200, `some texts parse (${parsed})`);
  });
});
