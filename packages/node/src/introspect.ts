import { invalidClaims, type LatchkeyClaims, pickClaims } from './claims.js';
import { MAX_TOKEN_LENGTH, type ResolvedConfig, requireSecretKey } from './config.js';
import { LatchkeyApiError, LatchkeyError, LatchkeyTokenError } from './errors.js';

/** The answer of the introspection endpoint (RFC 7662 section 2.2): active with claims, or not. */
export type IntrospectionResult = ({ active: true } & LatchkeyClaims) | { active: false };

export type Introspect = (token: string) => Promise<IntrospectionResult>;

const INTROSPECTION_PATH = '/api/auth/introspect';
const TIMEOUT_MS = 5_000;

export function createIntrospector(config: ResolvedConfig): Introspect {
  const endpoint = `${config.apiUrl}${INTROSPECTION_PATH}`;

  return async (token) => {
    const secretKey = requireSecretKey(config);
    if (typeof token !== 'string' || token === '') {
      throw new LatchkeyTokenError('token_missing', { reason: 'No access token was given.' });
    }
    // Nothing this long was ever issued: it is inactive, and need not cross the network.
    if (token.length > MAX_TOKEN_LENGTH) return { active: false };

    const response = await post(config, endpoint, secretKey, token);
    if (response.status !== 200) throw await apiError(response);
    let body: unknown;
    try {
      body = await response.json();
    } catch (cause) {
      throw unexpectedResponse(200, 'The introspection answer is not JSON.', cause);
    }
    return parseIntrospection(body);
  };
}

async function post(
  config: ResolvedConfig,
  endpoint: string,
  secretKey: string,
  token: string,
): Promise<Response> {
  const fetchImpl = config.fetch ?? globalThis.fetch;
  try {
    return await fetchImpl(endpoint, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${secretKey}`,
        'content-type': 'application/json',
        accept: 'application/json, application/problem+json',
      },
      body: JSON.stringify({ token }),
      // A redirect would carry the secret key elsewhere; report it instead of following it.
      redirect: 'manual',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (cause) {
    throw new LatchkeyError('api_unreachable', {
      reason: `The Latchkey API at ${config.apiUrl} could not be reached.`,
      action: 'Check LATCHKEY_API_URL and that the service is running.',
      cause,
    });
  }
}

function parseIntrospection(body: unknown): IntrospectionResult {
  if (typeof body === 'object' && body !== null) {
    const record = body as Record<string, unknown>;
    if (record.active === false) return { active: false };
    if (record.active === true && isAppToken(record)) {
      throw new LatchkeyTokenError('claims_invalid', {
        reason:
          "The access token is an app's own (client credentials: its sub is its client_id), with no user, session, e-mail or roles.",
        action:
          "Call this API with a token a user signed in for; verifyToken() refuses an app's token the same way.",
      });
    }
    if (record.active === true && invalidClaims(record).length === 0) {
      return { active: true, ...pickClaims(record) };
    }
  }
  throw unexpectedResponse(
    200,
    'The introspection answer is not a Latchkey introspection response.',
  );
}

/** An m2m app's client-credentials token, which the service answers active while the app exists. */
function isAppToken(record: Record<string, unknown>): boolean {
  return (
    typeof record.sub === 'string' && record.sub === record.client_id && record.sid === undefined
  );
}

/** RFC 9457 problem documents become LatchkeyApiError with the server's stable code. */
async function apiError(response: Response): Promise<LatchkeyApiError> {
  const status = response.status;
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
  const problem = await readProblem(response);
  if (problem === undefined) {
    const location = response.headers.get('location');
    return unexpectedResponse(
      status,
      `The Latchkey API answered ${status} without a problem document.`,
      undefined,
      status >= 300 && status < 400 && location
        ? `Set LATCHKEY_API_URL to the URL the API answers on (it redirects to ${location}).`
        : 'Check that LATCHKEY_API_URL points at the Latchkey service, not a proxy or another app.',
    );
  }
  return new LatchkeyApiError(problem.code, {
    status,
    detail: problem.detail,
    retryAfter,
    reason: `The Latchkey API refused the introspection (${status} ${problem.code})${problem.detail ? `: ${problem.detail}` : '.'}`,
    action: actionFor(problem.code, retryAfter),
  });
}

async function readProblem(
  response: Response,
): Promise<{ code: string; detail: string | undefined } | undefined> {
  if (!/json/i.test(response.headers.get('content-type') ?? '')) {
    await response.body?.cancel();
    return undefined;
  }
  try {
    const body = (await response.json()) as Record<string, unknown> | null;
    if (typeof body?.code !== 'string') return undefined;
    return { code: body.code, detail: typeof body.detail === 'string' ? body.detail : undefined };
  } catch {
    return undefined;
  }
}

function actionFor(code: string, retryAfter: number | undefined): string | undefined {
  switch (code) {
    case 'unauthorized':
      return 'Check that LATCHKEY_SECRET_KEY is a current, unrevoked secret key of this tenant (`latchkey keys list`).';
    case 'forbidden':
      return 'Use a secret key that has the tokens:introspect scope.';
    case 'rate_limited':
      return `Retry after ${retryAfter ?? 'a few'} seconds, or verify tokens locally with verifyToken().`;
    default:
      return undefined;
  }
}

function unexpectedResponse(
  status: number,
  reason: string,
  cause?: unknown,
  action = 'Check that LATCHKEY_API_URL points at the Latchkey service.',
): LatchkeyApiError {
  return new LatchkeyApiError('unexpected_response', { status, reason, action, cause });
}

/** RFC 9110 section 10.2.3: delay-seconds or an HTTP-date. */
function parseRetryAfter(value: string | null): number | undefined {
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - Date.now()) / 1000));
}
