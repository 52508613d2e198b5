// Assertions shared by the HTTP suites: the contract's error body and validation messages.
import assert from 'node:assert/strict';
import type { Response } from './client.js';

export interface ErrorBodyShape {
  serviceStatusCode: number;
  serviceStatusName: string;
  message: string;
  localizedMessage: string;
  result?: { messages: ValidationMessageShape[] };
}

export interface ValidationMessageShape {
  property: string;
  level: string;
  message: string;
  localizedMessage: string;
}

const ERROR_KEYS = ['localizedMessage', 'message', 'serviceStatusCode', 'serviceStatusName'];

/**
 * The response is an error with the given status and service code, its body a JSON object with
 * exactly the contract's fields (plus `result` for a 422 validation failure, and only then).
 */
export function assertError(res: Response, status: number, code: number, name?: string): ErrorBodyShape {
  assert.equal(res.status, status, `expected HTTP ${status}, got ${res.status}: ${res.text}`);
  assert.match(res.headers.get('content-type') ?? '', /application\/json/);
  const body = res.body as ErrorBodyShape;
  assert.equal(typeof body, 'object', `error body is not JSON: ${res.text}`);
  const expectedKeys = code === 4002 ? [...ERROR_KEYS, 'result'].sort() : ERROR_KEYS;
  assert.deepEqual(Object.keys(body).sort(), expectedKeys);
  assert.equal(body.serviceStatusCode, code);
  if (name !== undefined) assert.equal(body.serviceStatusName, name);
  assert.equal(typeof body.serviceStatusName, 'string');
  assert.equal(typeof body.message, 'string');
  assert.ok(body.message.length > 0);
  assert.equal(typeof body.localizedMessage, 'string');
  assert.ok(body.localizedMessage.length > 0);
  return body;
}

/** A 422/4002 whose result.messages are well formed; returns the messages. */
export function assertValidation(res: Response): ValidationMessageShape[] {
  const body = assertError(res, 422, 4002, 'VALIDATION_FAILED');
  assert.ok(body.result && Array.isArray(body.result.messages), 'result.messages missing');
  assert.ok(body.result.messages.length > 0);
  for (const m of body.result.messages) {
    assert.deepEqual(Object.keys(m).sort(), ['level', 'localizedMessage', 'message', 'property']);
    assert.ok(['ERROR', 'WARNING', 'INFO'].includes(m.level), `bad level ${m.level}`);
    assert.equal(typeof m.property, 'string');
    assert.equal(typeof m.message, 'string');
    assert.equal(typeof m.localizedMessage, 'string');
  }
  return body.result.messages;
}

/** The validation messages include one for `property` with level ERROR and this message. */
export function assertHasMessage(messages: readonly ValidationMessageShape[], property: string, message: string | RegExp): void {
  const found = messages.find(
    (m) => m.property === property && (typeof message === 'string' ? m.message === message : message.test(m.message)),
  );
  assert.ok(found, `no message for ${property} ${String(message)} in ${JSON.stringify(messages)}`);
  assert.equal(found.level, 'ERROR');
  assert.equal(found.localizedMessage, found.message);
}
