import { isLoopbackHost } from './config.js';
import { LatchkeyError } from './errors.js';
import type { FastifyLikeReply, NodeLikeResponse } from './middleware.js';

export interface ProtectedResourceOptions {
  /**
   * Your API's resource identifier (RFC 9728 section 1.2; RFC 8707): the https URL clients
   * call, such as `https://api.example.com/mcp`, exactly as they will write it. Tokens for it
   * name it in `aud`, so it is also the tenant's audience (`latchkey tenant update ID
   * --audience …`) and the `audience` option of `createLatchkey`.
   */
  resource: string;
  /** The tenant's issuer, `{authUrl}/t/{tenantId}`: the authorization server of the API. */
  issuer: string;
  /** The scopes a client may ask for to call the API (`scopes_supported`). */
  scopesSupported?: readonly string[] | undefined;
  /** A name people can read (`resource_name`). */
  resourceName?: string | undefined;
  /** A page about the API for developers (`resource_documentation`). */
  resourceDocumentation?: string | undefined;
}

/** The metadata document of RFC 9728 section 2, as served. */
export interface ProtectedResourceDocument {
  resource: string;
  authorization_servers: string[];
  bearer_methods_supported: ['header'];
  scopes_supported?: string[];
  resource_name?: string;
  resource_documentation?: string;
}

export interface ProtectedResourceMetadata {
  readonly document: Readonly<ProtectedResourceDocument>;
  /**
   * Where to serve it (RFC 9728 section 3.1): `/.well-known/oauth-protected-resource`, followed
   * by the resource's path when it has one (`…/oauth-protected-resource/mcp`).
   */
  readonly path: string;
  /** Its absolute URL: the `resourceMetadata` option of the middleware (RFC 9728 section 5.1). */
  readonly url: string;
  /** `node:http` and Express: `app.get(metadata.path, metadata.nodeHandler)`. */
  readonly nodeHandler: (req: { method?: string | undefined }, res: NodeLikeResponse) => void;
  /** Fastify: `app.get(metadata.path, metadata.fastifyHandler)`. */
  readonly fastifyHandler: (request: unknown, reply: FastifyLikeReply) => FastifyLikeReply;
  /** Web `Request` to `Response` (Hono: `app.get(metadata.path, (c) => metadata.fetchHandler(c.req.raw))`). */
  readonly fetchHandler: (request?: Request) => Response;
}

const WELL_KNOWN = '/.well-known/oauth-protected-resource';

/** The middleware's `resourceMetadata` option: where its 401s send clients. */
export function resourceMetadataUrl(value: unknown): string {
  return httpsUrl('resourceMetadata', value).href;
}

function invalid(reason: string, action: string): LatchkeyError {
  return new LatchkeyError('option_invalid', { reason, action });
}

/** An https URL (http only for this machine), as RFC 9728 section 2 and 3 ask. */
function httpsUrl(name: string, value: unknown): URL {
  const url = typeof value === 'string' ? URL.parse(value) : null;
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:'))
    throw invalid(
      `${name} is not an absolute https URL.`,
      `Pass a URL such as https://api.example.com/mcp.`,
    );
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname))
    throw invalid(
      `${name} uses http:// for ${url.hostname}, which is not this machine.`,
      `Use https://${url.host}${url.pathname === '/' ? '' : url.pathname} (http:// only for localhost).`,
    );
  if (url.hash || (value as string).includes('#'))
    throw invalid(`${name} has a fragment (#).`, 'RFC 9728 section 2: leave the fragment out.');
  if (url.username || url.password)
    throw invalid(`${name} has user info.`, 'Leave the user name and password out.');
  return url;
}

function document(options: ProtectedResourceOptions): ProtectedResourceDocument {
  if (typeof options !== 'object' || options === null)
    throw invalid(
      'protectedResourceMetadata needs { resource, issuer }.',
      'Pass your API URL as resource and the tenant issuer ({authUrl}/t/{tenantId}) as issuer.',
    );
  const { resource, issuer, scopesSupported, resourceName, resourceDocumentation } = options;
  const url = httpsUrl('resource', resource);
  if (url.search)
    throw invalid(
      'resource has a query component.',
      'RFC 9728 section 1.2 discourages one, and this helper does not serve one: use a path.',
    );
  // RFC 8414 section 3.3's rule, which RFC 9728 section 3.3 applies to `resource`: the issuer
  // a token names must be exactly the one published here.
  const issuerUrl = httpsUrl('issuer', issuer);
  if (issuerUrl.search)
    throw invalid('issuer has a query component.', 'Pass {authUrl}/t/{tenantId}.');
  if (
    scopesSupported !== undefined &&
    (!Array.isArray(scopesSupported) ||
      !scopesSupported.every((s) => typeof s === 'string' && /^[\x21\x23-\x5b\x5d-\x7e]+$/.test(s)))
  )
    throw invalid(
      'scopesSupported must be a list of scope names (RFC 6749 section 3.3).',
      "Pass names such as ['files:read'], or leave it out.",
    );
  if (resourceName !== undefined && (typeof resourceName !== 'string' || resourceName === ''))
    throw invalid('resourceName must be a non-empty string.', 'Pass a name, or leave it out.');
  if (resourceDocumentation !== undefined) httpsUrl('resourceDocumentation', resourceDocumentation);
  return {
    // As given: a client compares it with the URL it started from (RFC 9728 section 3.3).
    resource,
    authorization_servers: [issuer],
    bearer_methods_supported: ['header'],
    ...(scopesSupported ? { scopes_supported: [...scopesSupported] } : {}),
    ...(resourceName !== undefined ? { resource_name: resourceName } : {}),
    ...(resourceDocumentation !== undefined
      ? { resource_documentation: resourceDocumentation }
      : {}),
  };
}

/**
 * RFC 9728 protected-resource metadata for your API, so that a client (an MCP client, for
 * one) that meets its 401 learns which authorization server to get a token from. Serve
 * `nodeHandler`, `fastifyHandler` or `fetchHandler` at `path`, and give `url` to the
 * middleware's `resourceMetadata` option so that its 401s point here.
 */
export function protectedResourceMetadata(
  options: ProtectedResourceOptions,
): ProtectedResourceMetadata {
  const doc = Object.freeze(document(options));
  const resource = new URL(doc.resource);
  // RFC 9728 section 3.1: the well-known segment goes between the host and the path, and a
  // terminating slash of the path is removed first.
  const suffix = resource.pathname.replace(/\/+$/, '');
  const path = WELL_KNOWN + suffix;
  const url = resource.origin + path;
  const body = JSON.stringify(doc);

  // Public, unchanging, and read by browser-based clients on other origins (which send a
  // preflight for their own headers, such as MCP-Protocol-Version).
  const ok: Record<string, string> = {
    'content-type': 'application/json',
    // Said outright: node:http leaves it out of an answer to HEAD.
    'content-length': String(Buffer.byteLength(body)),
    'cache-control': 'public, max-age=3600',
    'access-control-allow-origin': '*',
  };
  const preflight: Record<string, string> = {
    'access-control-allow-origin': '*',
    'access-control-allow-methods': 'GET, HEAD, OPTIONS',
    'access-control-allow-headers': '*',
    'access-control-max-age': '86400',
  };
  const notAllowed: Record<string, string> = { allow: 'GET, HEAD, OPTIONS' };

  function answer(method: string | undefined): {
    status: number;
    headers: Record<string, string>;
    body: string | null;
  } {
    // HEAD too: the servers leave the body out and keep its length.
    if (method === 'GET' || method === 'HEAD' || method === undefined)
      return { status: 200, headers: ok, body };
    if (method === 'OPTIONS') return { status: 204, headers: preflight, body: null };
    return { status: 405, headers: notAllowed, body: null };
  }

  const metadata: ProtectedResourceMetadata = {
    document: doc,
    path,
    url,
    nodeHandler(req, res) {
      const out = answer(req.method);
      res.statusCode = out.status;
      for (const [name, value] of Object.entries(out.headers)) res.setHeader(name, value);
      res.end(out.body ?? '');
    },
    fastifyHandler(request, reply) {
      const out = answer((request as { method?: string }).method);
      reply.code(out.status);
      for (const [name, value] of Object.entries(out.headers)) reply.header(name, value);
      reply.send(out.body ?? '');
      return reply;
    },
    fetchHandler(request) {
      const out = answer(request?.method);
      const bodyless = out.body === null || request?.method === 'HEAD';
      return new Response(bodyless ? null : out.body, { status: out.status, headers: out.headers });
    },
  };
  return Object.freeze(metadata);
}
