import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ErrorObject } from 'ajv';
import { DomainError, type ValidationMessage } from '../src/core/errors.js';
import { MIN_PASSWORD_LENGTH } from '../src/core/password-policy.js';
import { httpStatus } from '../src/http/errors.js';
import { isTimeZone, propertyPath, toValidationMessages, Validator } from '../src/core/validation.js';
import { removeDir, tempDir } from './helpers/engines.js';

const schemas: Record<string, object> = {
  point: {
    $id: 'point',
    type: 'object',
    required: ['name', 'pointLocator'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 20 },
      xid: { type: 'string', pattern: '^[A-Za-z0-9_-]+$', patternDescription: 'may contain only letters, digits, _ and -' },
      pointLocator: {
        type: 'object',
        required: ['dataType'],
        properties: {
          dataType: { type: 'string', enum: ['NUMERIC', 'BINARY'] },
          offset: { type: 'integer', minimum: 0, maximum: 65535 },
          multiplier: { type: 'number', exclusiveMinimum: 0 },
          retries: { type: 'integer', minimum: 0 },
        },
      },
      tags: { type: 'object', additionalProperties: { type: 'string' } },
      email: { type: 'string', format: 'email' },
      timezone: { type: 'string', format: 'timezone' },
    },
  },
  bulk: {
    $id: 'bulk',
    type: 'array',
    items: {
      type: 'object',
      required: ['xid', 'value'],
      properties: { xid: { type: 'string' }, value: { type: ['number', 'string'] } },
    },
  },
};

const validPoint = { name: 'p', pointLocator: { dataType: 'NUMERIC' } };

/** Runs validate and returns the messages of the 422 it must throw. */
function failures(v: Validator, schema: string, body: unknown): ValidationMessage[] {
  try {
    v.validate(schema, body);
  } catch (err) {
    assert.ok(err instanceof DomainError, `expected DomainError, got ${String(err)}`);
    assert.equal(httpStatus(err), 422);
    assert.equal(err.statusName, 'VALIDATION_FAILED');
    assert.equal(err.serviceStatusCode, 4002);
    assert.ok(err.messages && err.messages.length > 0);
    return err.messages;
  }
  assert.fail('validation passed unexpectedly');
}

function only(messages: ValidationMessage[]): Pick<ValidationMessage, 'property' | 'message'>[] {
  return messages.map(({ property, message }) => ({ property, message }));
}

describe('propertyPath', () => {
  it('turns a nested JSON pointer into dot notation', () => {
    assert.equal(propertyPath('/pointLocator/offset'), 'pointLocator.offset');
  });
  it('writes array indices in brackets', () => {
    assert.equal(propertyPath('/3/xid'), '[3].xid');
    assert.equal(propertyPath('/items/2/tags/unit'), 'items[2].tags.unit');
    assert.equal(propertyPath('/0/1'), '[0][1]');
  });
  it('appends a child property (required, additionalProperties)', () => {
    assert.equal(propertyPath('', 'username'), 'username');
    assert.equal(propertyPath('/pointLocator', 'dataType'), 'pointLocator.dataType');
    assert.equal(propertyPath('/3', 'xid'), '[3].xid');
  });
  it('unescapes ~1 and ~0', () => {
    assert.equal(propertyPath('/tags/a~1b~0c'), 'tags.a/b~c');
  });
  it('gives the empty path for the root', () => {
    assert.equal(propertyPath(''), '');
  });
});

describe('toValidationMessages', () => {
  const err = (e: Partial<ErrorObject> & Pick<ErrorObject, 'keyword' | 'instancePath' | 'params'>): ErrorObject => ({ schemaPath: '#', ...e });

  it('skips combinator errors and drops duplicates', () => {
    const messages = toValidationMessages([
      err({ keyword: 'anyOf', instancePath: '/value', params: {} }),
      err({ keyword: 'type', instancePath: '/value', params: { type: 'string' } }),
      err({ keyword: 'type', instancePath: '/value', params: { type: 'string' } }),
      err({ keyword: 'oneOf', instancePath: '/value', params: { passingSchemas: null } }),
    ]);
    assert.deepEqual(messages, [{ property: 'value', level: 'ERROR', message: 'must be a string', localizedMessage: 'must be a string' }]);
  });

  it('names the missing and the unexpected property, not their parent', () => {
    const messages = toValidationMessages([
      err({ keyword: 'required', instancePath: '/pointLocator', params: { missingProperty: 'dataType' } }),
      err({ keyword: 'additionalProperties', instancePath: '', params: { additionalProperty: 'colour' } }),
    ]);
    assert.deepEqual(only(messages), [
      { property: 'pointLocator.dataType', message: 'is required' },
      { property: 'colour', message: 'is not allowed' },
    ]);
  });
});

describe('isTimeZone', () => {
  it('accepts IANA names and the empty string, refuses anything else', () => {
    assert.equal(isTimeZone('Europe/Berlin'), true);
    assert.equal(isTimeZone('UTC'), true);
    assert.equal(isTimeZone(''), true);
    assert.equal(isTimeZone('Mars/Olympus'), false);
    assert.equal(isTimeZone('+02:00 nonsense'), false);
  });
});

describe('Validator', () => {
  let dir: string;
  let v: Validator;

  before(async () => {
    dir = await tempDir('dds-schemas-');
    for (const [name, schema] of Object.entries(schemas)) await writeFile(join(dir, `${name}.json`), JSON.stringify(schema));
    await writeFile(join(dir, 'README.txt'), 'not a schema'); // ignored: only *.json files count
    v = new Validator(dir);
  });
  after(() => removeDir(dir));

  it('returns a valid body unchanged', () => {
    const body = { ...validPoint, pointLocator: { dataType: 'NUMERIC', offset: 65535, multiplier: 0.5 } };
    assert.equal(v.validate('point', body), body);
  });

  it('reports a missing field as "is required" at its path', () => {
    assert.deepEqual(only(failures(v, 'point', { pointLocator: {} })), [
      { property: 'name', message: 'is required' },
      { property: 'pointLocator.dataType', message: 'is required' },
    ]);
  });

  it('names a nested field in dot notation: pointLocator.offset', () => {
    const messages = failures(v, 'point', { ...validPoint, pointLocator: { dataType: 'NUMERIC', offset: 'x' } });
    assert.deepEqual(only(messages), [{ property: 'pointLocator.offset', message: 'must be an integer' }]);
  });

  it('says "must be between 0 and 65535" for a value below or above a minimum+maximum range', () => {
    for (const offset of [-1, 65536]) {
      const messages = failures(v, 'point', { ...validPoint, pointLocator: { dataType: 'NUMERIC', offset } });
      assert.deepEqual(only(messages), [{ property: 'pointLocator.offset', message: 'must be between 0 and 65535' }]);
    }
  });

  it('says "must be at least 0" for a minimum alone', () => {
    const messages = failures(v, 'point', { ...validPoint, pointLocator: { dataType: 'NUMERIC', retries: -2 } });
    assert.deepEqual(only(messages), [{ property: 'pointLocator.retries', message: 'must be at least 0' }]);
  });

  it('says "must be greater than 0" for exclusiveMinimum 0', () => {
    const messages = failures(v, 'point', { ...validPoint, pointLocator: { dataType: 'NUMERIC', multiplier: 0 } });
    assert.deepEqual(only(messages), [{ property: 'pointLocator.multiplier', message: 'must be greater than 0' }]);
  });

  it('names an array element as [3].xid', () => {
    const body = [
      { xid: 'a', value: 1 },
      { xid: 'b', value: 2 },
      { xid: 'c', value: 3 },
      { value: 4 },
      { xid: 7, value: 5 },
    ];
    assert.deepEqual(only(failures(v, 'bulk', body)), [
      { property: '[3].xid', message: 'is required' },
      { property: '[4].xid', message: 'must be a string' },
    ]);
  });

  it('describes union types, enums, lengths, formats, patterns and extra properties', () => {
    const messages = failures(v, 'bulk', [{ xid: 'a', value: true }]);
    assert.deepEqual(only(messages), [{ property: '[0].value', message: 'must be a number or a string' }]);

    assert.deepEqual(
      only(
        failures(v, 'point', {
          name: '',
          xid: 'has space',
          pointLocator: { dataType: 'TEXT' },
          email: 'nobody',
          timezone: 'Nowhere/Town',
          colour: 'red',
        }),
      ).sort((a, b) => a.property.localeCompare(b.property)),
      [
        { property: 'colour', message: 'is not allowed' },
        { property: 'email', message: 'must be a valid email address' },
        { property: 'name', message: 'must not be empty' },
        { property: 'pointLocator.dataType', message: 'must be one of: NUMERIC, BINARY' },
        { property: 'timezone', message: 'must be an IANA time zone such as Europe/Berlin' },
        { property: 'xid', message: 'may contain only letters, digits, _ and -' },
      ],
    );
    assert.deepEqual(only(failures(v, 'point', { ...validPoint, name: 'x'.repeat(21) })), [{ property: 'name', message: 'must be at most 20 characters' }]);
  });

  it('gives every message level ERROR and a localizedMessage', () => {
    for (const m of failures(v, 'point', {})) {
      assert.equal(m.level, 'ERROR');
      assert.equal(m.localizedMessage, m.message);
    }
  });

  it('puts every message in the DomainError text', () => {
    try {
      v.validate('point', { pointLocator: { dataType: 'NUMERIC', offset: -1 } });
      assert.fail('expected a 422');
    } catch (err) {
      assert.ok(err instanceof DomainError);
      assert.match(err.message, /name is required/);
      assert.match(err.message, /pointLocator\.offset must be between 0 and 65535/);
    }
  });

  it('refuses an unknown schema name with a plain Error (a programming mistake, not a 422)', () => {
    assert.throws(
      () => v.validate('nope', {}),
      (e: unknown) => !(e instanceof DomainError) && e instanceof Error && /unknown schema nope/.test(e.message),
    );
  });

  it('refuses a schema file whose $id differs from its file name', async () => {
    const bad = await tempDir('dds-schemas-bad-');
    try {
      await writeFile(join(bad, 'thing.json'), JSON.stringify({ $id: 'other', type: 'object' }));
      assert.throws(() => new Validator(bad), /thing\.json must have "\$id": "thing"/);
    } finally {
      await removeDir(bad);
    }
  });

  it('compiles the project\'s own schemas', () => {
    const real = new Validator();
    assert.deepEqual(only(failures(real, 'user', { password: 'x' })), [
      { property: 'username', message: 'is required' },
      { property: 'password', message: 'must be at least 8 characters' },
    ]);
  });

  it('asks every password a body sets (user password, login newPassword) for MIN_PASSWORD_LENGTH characters, as ADMIN_PASSWORD', () => {
    const real = new Validator();
    const short = 'x'.repeat(MIN_PASSWORD_LENGTH - 1);
    const enough = 'x'.repeat(MIN_PASSWORD_LENGTH);
    const tooShort = `must be at least ${MIN_PASSWORD_LENGTH} characters`;
    assert.deepEqual(only(failures(real, 'user', { username: 'u', password: short })), [{ property: 'password', message: tooShort }]);
    assert.doesNotThrow(() => real.validate('user', { username: 'u', password: enough }));
    assert.deepEqual(only(failures(real, 'login', { username: 'u', password: 'p', newPassword: short })), [{ property: 'newPassword', message: tooShort }]);
    assert.doesNotThrow(() => real.validate('login', { username: 'u', password: 'p', newPassword: enough }));
  });
});
