// CSV cells (src/api/csv.ts): RFC 4180 quoting and OWASP's formula-injection prefix for text.
import assert from 'node:assert/strict';
import { csvCell, csvRow } from '../src/api/csv.js';

describe('csvCell', () => {
  it('prefixes text that a spreadsheet would take for a formula with a single quote', () => {
    assert.equal(csvCell('=1+2'), "'=1+2");
    assert.equal(csvCell('+SUM(A1:A2)'), "'+SUM(A1:A2)");
    assert.equal(csvCell('-2+3'), "'-2+3");
    assert.equal(csvCell('@SUM(A1)'), "'@SUM(A1)");
    assert.equal(csvCell('\tcmd'), "'\tcmd");
    assert.equal(csvCell('-'), "'-");
    assert.equal(csvCell('+'), "'+");
  });

  it('quotes after the prefix when the text holds a quote, comma or line break', () => {
    assert.equal(csvCell('=HYPERLINK("http://x","y")'), `"'=HYPERLINK(""http://x"",""y"")"`);
    assert.equal(csvCell('\r=1'), `"'\r=1"`);
    assert.equal(csvCell('@a,b'), `"'@a,b"`);
    assert.equal(csvCell('-a\n=b'), `"'-a\n=b"`);
  });

  it('leaves a text that is a plain decimal number alone: it cannot be a formula', () => {
    for (const n of ['-5', '+1.5e3', '-0.25', '+.5', '-7.', '-1E-9', '+0']) assert.equal(csvCell(n), n);
    // Not plain numbers: prefixed.
    assert.equal(csvCell('-5 '), "'-5 ");
    assert.equal(csvCell('-1+1'), "'-1+1");
    assert.equal(csvCell('-Infinity'), "'-Infinity");
    assert.equal(csvCell('-0x10'), "'-0x10");
  });

  it('leaves other text alone, quoting it only when needed', () => {
    assert.equal(csvCell('on'), 'on');
    assert.equal(csvCell(' =1'), ' =1', 'a leading space is not a formula start');
    assert.equal(csvCell('a=b'), 'a=b');
    assert.equal(csvCell('say "hi"'), '"say ""hi"""');
    assert.equal(csvCell('a,b'), '"a,b"');
    assert.equal(csvCell(''), '');
  });

  it('writes numbers and booleans as they are, never prefixed, and null or undefined as an empty cell', () => {
    assert.equal(csvCell(-5), '-5');
    assert.equal(csvCell(-1.5e-7), '-1.5e-7');
    assert.equal(csvCell(1700000000000), '1700000000000');
    assert.equal(csvCell(true), 'true');
    assert.equal(csvCell(null), '');
    assert.equal(csvCell(undefined), '');
  });
});

describe('csvRow', () => {
  it('joins cells with commas and ends the line with CRLF', () => {
    assert.equal(csvRow([1000, '=cmd', null, -2]), "1000,'=cmd,,-2\r\n");
    assert.equal(csvRow(['timestamp', 'value']), 'timestamp,value\r\n');
  });
});
