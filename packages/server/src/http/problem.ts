import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { type FieldError, LatchkeyError } from '../errors/index.js';
import { isDatabaseUnavailable } from '../storage/index.js';
import { lingerIfUnread } from './connections.js';

interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

const TOO_SHORT = new Set(['minLength', 'minItems', 'minProperties', 'minimum']);
const TOO_LONG = new Set(['maxLength', 'maxItems', 'maxProperties', 'maximum']);

const UNITS: Record<string, string> = {
  minLength: 'characters',
  maxLength: 'characters',
  minItems: 'items',
  maxItems: 'items',
  minProperties: 'keys',
  maxProperties: 'keys',
  minimum: '',
  maximum: '',
};

function fieldName(path: string): string {
  const segments = path.split('/').filter((s) => s && !/^\d+$/.test(s));
  return (segments.at(-1) ?? 'body').replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/**
 * Maps schema errors to our codes: a wrong type is a malformed request (400
 * invalid_request); a broken field rule is 422 validation_failed with one entry per field,
 * named `{field}_too_short`, `{field}_too_long`, `{field}_invalid`, `required` or
 * `unknown_field`.
 */
export function fromSchemaErrors(errors: AjvError[], context: string): LatchkeyError {
  const where = context === 'body' ? 'body' : context;
  // In a union (e.g. string or null) a broken rule of one branch comes with a type error
  // of the other: that is a field rule, not a wrong type.
  const UNION = new Set(['type', 'anyOf', 'oneOf']);
  const typeError = errors.find(
    (e) =>
      e.keyword === 'type' &&
      !errors.some((o) => o.instancePath === e.instancePath && !UNION.has(o.keyword)),
  );
  if (typeError) {
    const path = typeError.instancePath || '';
    const expected = String(typeError.params.type ?? 'a different type');
    return new LatchkeyError(
      'invalid_request',
      path
        ? `${path.slice(1)} must be ${expected === 'object' ? 'an' : 'a'} ${expected}`
        : `The request ${where} must be a JSON ${expected}`,
    );
  }
  const seen = new Set<string>();
  const fields: FieldError[] = [];
  for (const e of errors) {
    if (UNION.has(e.keyword)) continue;
    let path = e.instancePath;
    let code: string;
    let message: string;
    if (e.keyword === 'required') {
      path = `${path}/${String(e.params.missingProperty)}`;
      code = 'required';
      message = `${fieldName(path)} is required`;
    } else if (e.keyword === 'additionalProperties') {
      path = `${path}/${String(e.params.additionalProperty)}`;
      code = 'unknown_field';
      message = `${fieldName(path)} is not a known field`;
    } else if (TOO_SHORT.has(e.keyword)) {
      code = `${fieldName(path)}_too_short`;
      message = `${fieldName(path)} must be at least ${String(e.params.limit)} ${UNITS[e.keyword]}`;
    } else if (TOO_LONG.has(e.keyword)) {
      code = `${fieldName(path)}_too_long`;
      message = `${fieldName(path)} must be at most ${String(e.params.limit)} ${UNITS[e.keyword]}`;
    } else if (
      e.keyword === 'propertyNames' ||
      e.keyword === 'not' ||
      (e.keyword === 'enum' && e.instancePath === '')
    ) {
      continue; // reported by the propertyNames entry below or by the service's rules
    } else {
      code = `${fieldName(path)}_invalid`;
      message = `${fieldName(path)} is not valid`;
    }
    if (e.message && code.endsWith('_invalid') && e.keyword === 'format') {
      message = `${fieldName(path)} is not a valid ${String(e.params.format ?? 'value').replace('email', 'e-mail address')}`;
    }
    const id = `${path}|${code}`;
    if (seen.has(id)) continue;
    seen.add(id);
    fields.push({ path, code, message });
  }
  const names = errors.filter((e) => e.keyword === 'propertyNames');
  for (const e of names) {
    const path = e.instancePath;
    const id = `${path}|${fieldName(path)}_invalid`;
    if (seen.has(id)) continue;
    seen.add(id);
    fields.push({
      path,
      code: `${fieldName(path)}_invalid`,
      message: `${fieldName(path)} has a key that is not allowed (${String(e.params.propertyName ?? '')})`,
    });
  }
  if (fields.length === 0)
    fields.push({ path: '', code: 'invalid', message: 'The request is not valid' });
  return new LatchkeyError(
    'validation_failed',
    fields.length === 1 ? (fields[0]?.message ?? '') : `${fields.length} fields failed validation`,
    { errors: fields },
  );
}

/** Turns any error into a LatchkeyError, never echoing request content. */
export function toLatchkeyError(error: FastifyError | Error): LatchkeyError {
  if (error instanceof LatchkeyError) return error;
  const e = error as FastifyError & { validation?: AjvError[]; validationContext?: string };
  if (e.validation) return fromSchemaErrors(e.validation, e.validationContext ?? 'body');
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new LatchkeyError('payload_too_large', 'The request body is larger than the limit', {
        cause: error,
      });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new LatchkeyError(
        'unsupported_media_type',
        'Send the request body as application/json',
        { cause: error },
      );
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new LatchkeyError('invalid_request', 'The request body is empty', { cause: error });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new LatchkeyError('invalid_request', 'Content-Length does not match the body', {
        cause: error,
      });
  }
  // JSON.parse messages quote the input, which may hold a password: say nothing of it.
  if (
    e.statusCode === 400 &&
    (error instanceof SyntaxError || e.code === 'FST_ERR_CTP_INVALID_JSON_BODY')
  ) {
    const detail = /prototype/.test(error.message)
      ? 'The request body contains a forbidden key (__proto__ or constructor.prototype)'
      : 'The request body is not valid JSON';
    return new LatchkeyError('invalid_request', detail);
  }
  if (e.statusCode === 405) return new LatchkeyError('method_not_allowed', 'Method not allowed');
  if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) {
    return new LatchkeyError('invalid_request', 'The request is not valid', { cause: error });
  }
  if (isDatabaseUnavailable(error)) {
    return new LatchkeyError('service_unavailable', 'The database did not answer; try again', {
      cause: error,
      headers: { 'retry-after': '1' },
    });
  }
  return new LatchkeyError(
    'internal_error',
    'Something went wrong on our side; it has been logged',
    { cause: error },
  );
}

export function sendProblem(reply: FastifyReply, error: LatchkeyError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  // Refused before its body was read (a 413, say): the client may still be sending it.
  lingerIfUnread(reply.request.raw);
  return reply
    .code(error.status)
    .header('content-type', 'application/problem+json; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(JSON.stringify(error.toProblem()));
}

export function errorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const problem = toLatchkeyError(error);
  if (problem.status >= 500) request.log.error({ err: error }, 'request failed');
  else request.log.info({ code: problem.code, status: problem.status }, 'request refused');
  return sendProblem(reply, problem);
}
