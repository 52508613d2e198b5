// Regular expressions from clients (the ALPHANUMERIC_REGEX_STATE detector's `state`), matched in bounded
// time whatever the pattern and the value. JavaScript's RegExp backtracks: `(a+)+$` against 30 a's and a
// '!' runs for minutes, on the event loop. re2js (pure JavaScript port of RE2, no native build) runs in
// time linear in the value's length times the size of the compiled program, never exponential. So both
// factors are bounded: the pattern's length and its compiled size here, the value's length where values
// are accepted (65,535 characters, values/ingest/types.ts).
//
// RE2 syntax is Java's and Perl's without what only backtracking can do: backreferences, lookaround,
// possessive quantifiers and atomic groups are refused when the pattern is saved, as any pattern that does
// not compile.
import { RE2JS } from 're2js';

/** Longest pattern accepted, in characters (schemas/event-detector.json says the same as maxLength). */
export const MAX_PATTERN_LENGTH = 255;

/**
 * Largest compiled program accepted (RE2's instruction count). re2js tries a DFA first (a few ms for a
 * 65,535-character value); a pattern whose DFA explodes (`(a|b)*a(a|b){30}b$`) falls back to the NFA,
 * which costs about the program's size per character: measured, under a second for the longest value
 * against the worst pattern of this size, where the usual patterns (anchors, alternations of words,
 * classes: 5 to 50 instructions) take a few ms. A repeat count inflates the program without lengthening
 * the pattern: `(?:a|ab|b){1000}c` is 17 characters and 6,003 instructions.
 */
export const MAX_PROGRAM_SIZE = 100;

/** A compiled pattern: does it occur anywhere in the text (Mango's `Matcher.find()`)? */
export interface TextPattern {
  readonly source: string;
  test(text: string): boolean;
}

/** The pattern compiled, or why it cannot be used (a message for the field that holds it). */
export function compilePattern(source: string): TextPattern | { error: string } {
  if (source.length === 0) return { error: 'must not be empty' };
  if (source.length > MAX_PATTERN_LENGTH) return { error: `must be at most ${MAX_PATTERN_LENGTH} characters` };
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(source);
  } catch (err) {
    return { error: `is not a valid regular expression: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (compiled.programSize() > MAX_PROGRAM_SIZE) {
    return { error: `is too complex: it compiles to ${compiled.programSize()} instructions, at most ${MAX_PROGRAM_SIZE} are allowed (a shorter pattern, or smaller repeat counts)` };
  }
  // test(): found anywhere, without capture groups (re2js's DFA path).
  return { source, test: (text) => compiled.test(text) };
}

export function isPatternError(p: TextPattern | { error: string }): p is { error: string } {
  return 'error' in p;
}
