import type { FastifyInstance } from 'fastify';
import sjson from 'secure-json-parse';
import { LatchkeyError } from '../errors/index.js';

/** PostgreSQL text cannot hold NUL, and no field of ours has a use for it: such a body is refused. */
export function hasNul(text: string): boolean {
  return text.includes('\\u0000') || text.includes('\0');
}

/**
 * The JSON body parser: Fastify's own (secure-json-parse), but with errors that say which
 * rule broke, and never quote the body (JSON.parse's messages would echo a password).
 */
export function registerJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    if (text.length === 0)
      return done(new LatchkeyError('invalid_request', 'The request body is empty'));
    if (hasNul(text)) {
      return done(
        new LatchkeyError('invalid_request', 'The request body contains a NUL character'),
      );
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return done(new LatchkeyError('invalid_request', 'The request body is not valid JSON'));
    }
    try {
      if (typeof parsed === 'object' && parsed !== null) {
        sjson.scan(parsed as Record<string, unknown>, {
          protoAction: 'error',
          constructorAction: 'error',
        });
      }
      done(null, parsed);
    } catch {
      done(
        new LatchkeyError(
          'invalid_request',
          'The request body contains a forbidden key (__proto__ or constructor.prototype)',
        ),
      );
    }
  });
}
