// Response headers that protect browsers from our answers being misread or framed: `nosniff` on
// every answer, and the page policies of the two HTML front ends (the console and Swagger UI).
import type { Context, Next } from 'koa';

export const NOSNIFF = { 'X-Content-Type-Options': 'nosniff' } as const;

/** Every answer: a browser never guesses a type other than the one we declare (JSON read as HTML). */
export async function noSniff(ctx: Context, next: Next): Promise<void> {
  ctx.set(NOSNIFF);
  await next();
}

/** Headers of a page that may run only its own files and is never framed (clickjacking). */
export function pageHeaders(contentSecurityPolicy: string): Record<string, string> {
  return {
    'Content-Security-Policy': `${contentSecurityPolicy}; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`,
    ...NOSNIFF,
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
  };
}
