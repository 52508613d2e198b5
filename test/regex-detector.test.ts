// The ALPHANUMERIC_REGEX_STATE detector (Mango's): `state` is a regular expression, the event is active
// while it is found in the point's text value (for durationMs, like the other state detectors). Matching
// takes bounded time whatever the pattern and the value (core/bounded-regex.ts); a pattern that does not
// compile, or compiles too large, is a 422 naming state.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compilePattern, isPatternError, MAX_PATTERN_LENGTH, MAX_PROGRAM_SIZE } from '../src/core/bounded-regex.js';
import { schemasDir } from '../src/paths.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { assertHasMessage, assertValidation } from './helpers/assertions.js';
import { ApiClient, getList, loggedIn } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';

interface EventBody {
  id: number;
  active: boolean;
  activeTimestamp: number;
  rtnTimestamp: number | null;
  rtnCause: string | null;
  message: string;
  eventType: { eventType: string; subType: string | null };
}

const DS = '/rest/latest/data-sources';
const DP = '/rest/latest/data-points';
const ED = '/rest/latest/event-detectors';
const PV = '/rest/latest/point-values';
const EV = '/rest/latest/events';

/** Catastrophic for a backtracking engine: JavaScript's RegExp needs ~4 s for 24 a's and a '!'. */
const EVIL = '(a+)+$';
const EVIL_VALUE = `${'a'.repeat(50_000)}!`;
/** What "quickly" means here: generous against a loaded machine, hopeless for backtracking. */
const BUDGET_MS = 2_000;

describe('bounded regular expressions (core/bounded-regex.ts)', () => {
  it('matches a pattern that is catastrophic for backtracking in linear time', () => {
    const p = compilePattern(EVIL);
    assert.ok(!isPatternError(p), JSON.stringify(p));
    const started = performance.now();
    assert.equal(p.test(EVIL_VALUE), false);
    assert.equal(p.test('a'.repeat(50_000)), true);
    assert.ok(performance.now() - started < BUDGET_MS, `took ${performance.now() - started} ms`);
  });

  it('finds the pattern anywhere in the value, as Mango (Matcher.find)', () => {
    const p = compilePattern('FAULT|TRIP');
    assert.ok(!isPatternError(p));
    assert.equal(p.test('pump 3 FAULT code 7'), true);
    assert.equal(p.test('running'), false);
    const anchored = compilePattern('^OK$');
    assert.ok(!isPatternError(anchored));
    assert.equal(anchored.test('OK'), true);
    assert.equal(anchored.test('NOT OK'), false);
  });

  it('refuses empty, too long, non-compiling and too complex patterns with a message', () => {
    const error = (source: string) => {
      const p = compilePattern(source);
      assert.ok(isPatternError(p), `${source} was accepted`);
      return p.error;
    };
    assert.equal(error(''), 'must not be empty');
    assert.match(error('a'.repeat(MAX_PATTERN_LENGTH + 1)), new RegExp(`at most ${MAX_PATTERN_LENGTH} characters`));
    assert.match(error('(abc'), /^is not a valid regular expression: .*missing closing \)/);
    assert.match(error('(a)\\1'), /^is not a valid regular expression/, 'backreferences need backtracking');
    assert.match(error('a(?=b)'), /^is not a valid regular expression/, 'lookahead needs backtracking');
    assert.match(error('(?:a|ab|b){1000}c'), new RegExp(`^is too complex: .* at most ${MAX_PROGRAM_SIZE}`));
    assert.ok(!isPatternError(compilePattern('^(?i)(ok|running|idle|standby|starting|stopping)$')), 'a usual pattern is well within the bounds');
  });

  it('says the same maximum length as schemas/event-detector.json', () => {
    const schema = JSON.parse(readFileSync(join(schemasDir, 'event-detector.json'), 'utf8')) as { properties: { state: { maxLength: number } } };
    assert.equal(schema.properties.state.maxLength, MAX_PATTERN_LENGTH);
  });
});

announceEngines();
for (const engine of metadataEngines()) {
  describe(`ALPHANUMERIC_REGEX_STATE detectors (${engine})`, function () {
    this.timeout(30_000);
    let app: TestApp;
    let admin: ApiClient;
    let seq = 0;
    let clock = Date.now() - 3_600_000;
    const SOURCE = 'rx-src';

    async function point(dataType = 'ALPHANUMERIC'): Promise<string> {
      const xid = `rx-p${++seq}`;
      const res = await admin.post(DP, { xid, name: `Point ${seq}`, dataSourceXid: SOURCE, pointLocator: { dataType, settable: true, changeType: 'NO_CHANGE' } });
      assert.equal(res.status, 201, res.text);
      return xid;
    }

    const body = (dataPointXid: string, state: unknown, extra: Record<string, unknown> = {}) => ({
      xid: `rx-ed${++seq}`,
      name: `Regex ${seq}`,
      dataPointXid,
      detectorType: 'ALPHANUMERIC_REGEX_STATE',
      alarmLevel: 'URGENT',
      state,
      ...extra,
    });

    async function detector(dataPointXid: string, state: string, extra: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
      const res = await admin.post<Record<string, unknown>>(ED, body(dataPointXid, state, extra));
      assert.equal(res.status, 201, res.text);
      return res.body;
    }

    /** Writes text values through the bulk API, each newer than the last; returns their timestamps. */
    async function write(xid: string, ...values: string[]): Promise<number[]> {
      const stamps: number[] = [];
      for (const value of values) {
        clock += 10;
        stamps.push(clock);
        const res = await admin.post(PV, [{ xid, value, timestamp: clock }]);
        assert.equal(res.status, 200, res.text);
      }
      await app.service.services.detectors.idle();
      return stamps;
    }

    const eventsOf = async (xid: string) => (await getList<EventBody>(admin, `${EV}?dataPointXid=${xid}&sort(id)`)).items;

    before(async () => {
      app = await startTestApp(engine);
      admin = await loggedIn(app.url, 'admin', 'admin');
      const res = await admin.post(DS, { xid: SOURCE, name: 'Regex device', modelType: 'VIRTUAL', enabled: true, updatePeriods: 1, updatePeriodType: 'HOURS' });
      assert.equal(res.status, 201, res.text);
    });
    after(() => app.stop());

    it('is active while the pattern is found in the value, and returns to normal when it is not', async () => {
      const xid = await point();
      const created = await detector(xid, '^(ALARM|FAULT)\\b');
      assert.equal(created.detectorType, 'ALPHANUMERIC_REGEX_STATE');
      assert.equal(created.state, '^(ALARM|FAULT)\\b');
      const [, up, , down] = await write(xid, 'running', 'ALARM high pressure', 'FAULT 7', 'running again');
      let events = await eventsOf(xid);
      assert.equal(events.length, 1, 'one event for one episode, not one per matching value');
      assert.equal(events[0]!.activeTimestamp, up);
      assert.equal(events[0]!.rtnTimestamp, down);
      assert.equal(events[0]!.rtnCause, 'RETURN_TO_NORMAL');
      assert.equal(events[0]!.eventType.subType, 'ALPHANUMERIC_REGEX_STATE');
      assert.match(events[0]!.message, /matches \^\(ALARM\|FAULT\)\\b/);
      await write(xid, 'ALARMING', 'FAULT');
      events = await eventsOf(xid);
      assert.equal(events.length, 2, '\\b: ALARMING does not match, FAULT does');
      assert.equal(events[1]!.active, true);
    });

    it("takes node-mango-client's default detector (state '.*'), which matches every value, the empty one too", async () => {
      const xid = await point();
      await detector(xid, '.*');
      await write(xid, '');
      const events = await eventsOf(xid);
      assert.equal(events.length, 1);
      assert.equal(events[0]!.active, true);
    });

    it('durationMs: the pattern must be found for that long (value timestamps as far apart)', async () => {
      const xid = await point();
      await detector(xid, 'FAULT', { durationMs: 5_000 });
      await write(xid, 'FAULT');
      clock += 2_500;
      await write(xid, 'FAULT', 'ok');
      assert.equal((await eventsOf(xid)).length, 0, 'found for less than durationMs');
      const [first] = await write(xid, 'FAULT');
      clock = first! + 5_000;
      await write(xid, 'FAULT still');
      const events = await eventsOf(xid);
      assert.equal(events.length, 1);
      assert.equal(events[0]!.active, true);
      assert.match(events[0]!.message, /for 5000 ms/);
    });

    it('matches a 50,000-character value against a pattern catastrophic for backtracking, quickly', async () => {
      const xid = await point();
      await detector(xid, EVIL);
      const started = performance.now();
      await write(xid, EVIL_VALUE);
      assert.equal((await eventsOf(xid)).length, 0, 'the value ends with "!": no match');
      await write(xid, 'a'.repeat(50_000));
      assert.ok(performance.now() - started < BUDGET_MS * 2, `took ${performance.now() - started} ms`);
      const events = await eventsOf(xid);
      assert.equal(events.length, 1);
      assert.equal(events[0]!.active, true);
    });

    it('keeps its state through GET then PUT, and follows a changed pattern', async () => {
      const xid = await point();
      const created = await detector(xid, 'x+');
      const put = await admin.put<Record<string, unknown>>(`${ED}/${created.xid as string}`, { ...created, state: 'y+' });
      assert.equal(put.status, 200, put.text);
      assert.equal(put.body.state, 'y+');
      await write(xid, 'xxx');
      assert.equal((await eventsOf(xid)).length, 0, 'the old pattern is no longer watched');
      await write(xid, 'yyy');
      assert.equal((await eventsOf(xid)).length, 1);
    });

    it('refuses a pattern that does not compile, is empty, too long or too complex: 422 naming state', async () => {
      const xid = await point();
      const refused = async (state: unknown, message: string | RegExp) => {
        const res = await admin.post(ED, body(xid, state));
        assertHasMessage(assertValidation(res), 'state', message);
      };
      await refused('(unclosed', /^is not a valid regular expression/);
      await refused('(a)\\1', /^is not a valid regular expression/);
      await refused('', /.+/);
      await refused('a'.repeat(MAX_PATTERN_LENGTH + 1), /.+/);
      await refused('(?:a|ab|b){1000}c', /^is too complex/);
      await refused(42, /string/);
      const missing = await admin.post(ED, { ...body(xid, 'x'), state: undefined });
      assertHasMessage(assertValidation(missing), 'state', 'is required');
      const created = await detector(xid, 'ok');
      const put = await admin.put(`${ED}/${created.xid as string}`, { ...created, state: '[z-a]' });
      assertHasMessage(assertValidation(put), 'state', /^is not a valid regular expression/);
      assert.equal((await admin.get<Record<string, unknown>>(`${ED}/${created.xid as string}`)).body.state, 'ok', 'a refused PUT changes nothing');
    });

    it('is for ALPHANUMERIC points only; other state detectors still refuse a text state', async () => {
      const numeric = await point('NUMERIC');
      assertHasMessage(assertValidation(await admin.post(ED, body(numeric, 'x'))), 'dataPointXid', /ALPHANUMERIC/);
      const binary = await point('BINARY');
      assertHasMessage(assertValidation(await admin.post(ED, { ...body(binary, 'true'), detectorType: 'BINARY_STATE' })), 'state', /.+/);
    });
  });
}
