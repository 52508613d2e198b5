// Mocha's settings. The whole suite runs when no test file is named (`npm test`); naming files
// (`npx mocha test/a.test.ts`) runs only those: a `spec` here would be added to the files named.
const named = process.argv.slice(2).some((arg) => /\.test\.ts$/.test(arg));
/* global module */

module.exports = {
  // One process runs every suite, and each suite that starts and stops a service keeps about 100 MB of
  // heap afterwards (measured after a forced GC; so before issue 28 too): with the suites of issues 28
  // and 29 the total passed V8's default limit here (~3.4 GB). Not yet found; the limit is raised meanwhile.
  'node-option': ['import=tsx', 'max-old-space-size=8192'],
  ...(named ? {} : { spec: ['test/**/*.test.ts'] }),
  timeout: 30000,
  exit: true,
};
