// The comments of a TypeScript or JavaScript source, found without a parser (TypeScript's takes
// seconds to load): strings, template literals (with their ${} nesting) and regular expression
// literals are skipped, so a `//` or `/*` inside them is not taken for a comment. A `/` starts a
// regular expression where an expression may start: after an operator, an opening bracket, a comma
// or semicolon, or a keyword such as return; elsewhere it divides.

const REGEX_AFTER_WORD = new Set(['return', 'typeof', 'instanceof', 'in', 'of', 'new', 'delete', 'void', 'throw', 'case', 'do', 'else', 'yield', 'await']);

/** The text of every comment in `text`, `//` and `/*` included, in order. */
export function commentsOf(text: string): string[] {
  const out: string[] = [];
  /** Per open `{`: whether it is a template literal's `${` (its `}` goes back into the template). */
  const braces: boolean[] = [];
  let i = 0;
  let last = ''; // the last significant character of code, or the last word
  const skipTemplate = (): void => {
    // i is just past a backtick or a template's closing `}`; stops past the closing backtick or a `${`.
    while (i < text.length) {
      const c = text[i]!;
      if (c === '\\') i += 2;
      else if (c === '`') {
        i++;
        last = '`';
        return;
      } else if (c === '$' && text[i + 1] === '{') {
        i += 2;
        braces.push(true);
        last = '{';
        return;
      } else i++;
    }
  };
  while (i < text.length) {
    const c = text[i]!;
    if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      const stop = end < 0 ? text.length : end;
      out.push(text.slice(i, stop));
      i = stop;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      out.push(text.slice(i, stop));
      i = stop;
    } else if (c === '/' && (last === '' || /[(,=:[!&|?{};+\-*%<>~^]/.test(last) || REGEX_AFTER_WORD.has(last))) {
      // A regular expression literal: up to the unescaped `/` outside a character class.
      let inClass = false;
      for (i++; i < text.length && text[i] !== '\n'; i++) {
        const r = text[i]!;
        if (r === '\\') i++;
        else if (r === '[') inClass = true;
        else if (r === ']') inClass = false;
        else if (r === '/' && !inClass) break;
      }
      i++;
      last = 'regex';
    } else if (c === "'" || c === '"') {
      for (i++; i < text.length && text[i] !== c && text[i] !== '\n'; i++) if (text[i] === '\\') i++;
      i++;
      last = 'string';
    } else if (c === '`') {
      i++;
      skipTemplate();
    } else if (c === '{') {
      braces.push(false);
      last = '{';
      i++;
    } else if (c === '}') {
      i++;
      if (braces.pop()) skipTemplate();
      else last = '}';
    } else if (/[A-Za-z_$]/.test(c)) {
      const start = i;
      while (i < text.length && /[\w$]/.test(text[i]!)) i++;
      last = text.slice(start, i);
    } else {
      if (!/\s/.test(c)) last = c;
      i++;
    }
  }
  return out;
}
