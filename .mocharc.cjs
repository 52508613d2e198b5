// Mocha's settings. The whole suite runs when no test file is named (`npm test`); naming files
// (`npx mocha test/a.test.ts`) runs only those: a `spec` here would be added to the files named.
const named = process.argv.slice(2).some((arg) => /\.test\.ts$/.test(arg));
/* global module */

module.exports = {
  'node-option': ['import=tsx'],
  ...(named ? {} : { spec: ['test/**/*.test.ts'] }),
  timeout: 30000,
  exit: true,
};
