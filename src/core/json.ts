// Parsing JSON text from a client: a syntax error is the client's mistake (400), never a 500.
import { DomainError } from './errors.js';

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const detail = err instanceof SyntaxError ? `: ${err.message}` : '';
    throw DomainError.badRequest(`Invalid JSON${detail}`);
  }
}
