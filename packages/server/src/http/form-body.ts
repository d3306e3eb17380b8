import { LatchkeyError } from '../errors/index.js';

type Done = (error: Error | null, body?: unknown) => void;

/** application/x-www-form-urlencoded, parsed by URLSearchParams; NUL is refused (as in JSON). */
export function parseForm(_request: unknown, body: string | Buffer, done: Done): void {
  const text = String(body);
  if (/%00/i.test(text)) {
    done(new LatchkeyError('invalid_request', 'The form contains a NUL character'));
    return;
  }
  done(null, Object.fromEntries(new URLSearchParams(text)));
}
