// Which form a point-value read answers in: `?format=json|csv|arrow|parquet`, else the Accept header.
// Decided before any work, so a wrong one is an error answer, never a cut-off body.
import type { AppContext } from '../http/state.js';
import { HttpStatusError } from '../http/errors.js';
import { DomainError } from '../core/errors.js';
import { singleQuery } from './query-params.js';

export const JSON_TYPE = 'application/json';
export const CSV_TYPE = 'text/csv; charset=utf-8';
export const ARROW_TYPE = 'application/vnd.apache.arrow.stream';
export const PARQUET_TYPE = 'application/vnd.apache.parquet';

export const ANSWER_FORMATS = ['json', 'csv', 'arrow', 'parquet'] as const;
export type AnswerFormat = (typeof ANSWER_FORMATS)[number];

/** The media types of each format, JSON first: the one a client accepting anything gets. */
const MEDIA_TYPES: Record<AnswerFormat, string> = {
  json: 'application/json',
  csv: 'text/csv',
  arrow: ARROW_TYPE,
  parquet: PARQUET_TYPE,
};

export const CONTENT_TYPES: Record<AnswerFormat, string> = { json: JSON_TYPE, csv: CSV_TYPE, arrow: ARROW_TYPE, parquet: PARQUET_TYPE };

/** Whether the format is a table of typed columns (Arrow, Parquet) rather than text. */
export function isColumnar(format: AnswerFormat): format is 'arrow' | 'parquet' {
  return format === 'arrow' || format === 'parquet';
}

/**
 * The answer's format. `format` wins over Accept; an unknown format is a 400 naming the parameter.
 * An Accept that names none of the four (and no wildcard) is a 406: a client that asked only for,
 * say, XML would otherwise get JSON it cannot read and find out late.
 */
export function answerFormat(ctx: AppContext): AnswerFormat {
  // The same URL answers differently by Accept: a cache between must key on it.
  ctx.vary('Accept');
  const named = singleQuery(ctx, 'format');
  if (named !== undefined) {
    if (!(ANSWER_FORMATS as readonly string[]).includes(named)) throw DomainError.badRequest(`Invalid query parameter format: must be one of ${ANSWER_FORMATS.join(', ')}`);
    return named as AnswerFormat;
  }
  const accepted = ctx.accepts(...Object.values(MEDIA_TYPES));
  if (accepted === false) {
    throw new HttpStatusError(406, `Not acceptable: this read answers ${Object.values(MEDIA_TYPES).join(', ')} (or ?format=${ANSWER_FORMATS.join('|')})`);
  }
  const format = (Object.keys(MEDIA_TYPES) as AnswerFormat[]).find((f) => MEDIA_TYPES[f] === accepted);
  return format ?? 'json';
}
