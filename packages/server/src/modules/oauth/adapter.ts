import type { Kysely } from 'kysely';
import { type Adapter, type AdapterPayload, errors } from 'oidc-provider';
import { defaults } from '../../config/defaults.js';
import { sha256Hex } from '../../crypto/hash.js';
import type { Publisher, Schema } from '../../storage/index.js';
import { currentSession, endGrantSessions, rememberSession } from './account.js';

/**
 * The models whose id is a bearer secret (a code, a refresh token): their rows are keyed
 * by its SHA-256 and keep no `jti`, as Latchkey's own refresh tokens are (§5), so that a
 * copy of the database hands out no tokens.
 */
const SECRET_IDS = new Set(['AuthorizationCode', 'RefreshToken']);

/**
 * node-oidc-provider's storage for one tenant (docs/design.md §14): every model it keeps
 * (Session, Interaction, AuthorizationCode, RefreshToken, Grant, ReplayDetection) is a row
 * of `oauth_artifacts` with its payload as JSON, on SQLite and PostgreSQL alike. JWT access
 * tokens are never stored (the provider does not ask to). A refresh token's row keeps the
 * Latchkey session its access tokens belong to (`session_id`), and revoking a grant's access
 * tokens ends that session, the only way to stop JWTs that are not stored.
 */
export class ArtifactAdapter implements Adapter {
  readonly #db: Kysely<Schema>;
  readonly #tenantId: string;
  readonly #model: string;
  readonly #reuseMs: number;
  readonly #bus: Publisher;

  constructor(
    deps: { db: Kysely<Schema>; bus: Publisher },
    tenantId: string,
    model: string,
    {
      refreshReuseIntervalMs = defaults.refreshReuseIntervalMs,
    }: { refreshReuseIntervalMs?: number } = {},
  ) {
    const { db } = deps;
    this.#bus = deps.bus;
    this.#db = db;
    this.#tenantId = tenantId;
    this.#model = model;
    this.#reuseMs = refreshReuseIntervalMs;
  }

  /** The row's key: the id, or its SHA-256 for a secret one. */
  #key(id: string): string {
    return SECRET_IDS.has(this.#model) ? sha256Hex(id) : id;
  }

  #rows() {
    return this.#db
      .selectFrom('oauth_artifacts')
      .selectAll()
      .where('tenant_id', '=', this.#tenantId)
      .where('model', '=', this.#model);
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const now = Date.now();
    const secret = SECRET_IDS.has(this.#model);
    const { jti: _jti, ...kept } = payload;
    const columns = {
      payload: JSON.stringify(secret ? kept : payload),
      grant_id: payload.grantId ?? null,
      uid: payload.uid ?? null,
      client_id: payload.clientId ?? null,
      expires_at: expiresIn === undefined ? null : now + expiresIn * 1_000,
    };
    await this.#db
      .insertInto('oauth_artifacts')
      .values({
        tenant_id: this.#tenantId,
        model: this.#model,
        id: this.#key(id),
        ...columns,
        session_id: this.#model === 'RefreshToken' ? (currentSession() ?? null) : null,
        consumed_at: null,
        created_at: now,
      })
      .onConflict((oc) => oc.columns(['tenant_id', 'model', 'id']).doUpdateSet(columns))
      .execute();
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const payload = this.#live(
      await this.#rows().where('id', '=', this.#key(id)).executeTakeFirst(),
    );
    // A secret id is not stored: the presented one is the token's `jti`.
    return payload && SECRET_IDS.has(this.#model) ? { ...payload, jti: id } : payload;
  }

  /** Only Sessions are looked up by uid (Provider#interactionDetails). */
  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.#live(await this.#rows().where('uid', '=', uid).executeTakeFirst());
  }

  /** The device flow is off: no user codes. */
  async findByUserCode(): Promise<undefined> {
    return undefined;
  }

  /**
   * Marks a code or refresh token used. A code is used once: when another request got it
   * first (the row was already consumed), this one fails with invalid_grant, so two
   * concurrent redemptions never both get tokens (RFC 6749 section 4.1.2).
   */
  async consume(id: string): Promise<void> {
    const result = await this.#db
      .updateTable('oauth_artifacts')
      .set({ consumed_at: Date.now() })
      .where('tenant_id', '=', this.#tenantId)
      .where('model', '=', this.#model)
      .where('id', '=', this.#key(id))
      .where('consumed_at', 'is', null)
      .executeTakeFirst();
    if (this.#model === 'AuthorizationCode' && result.numUpdatedRows === 0n)
      throw new errors.InvalidGrant('authorization code already consumed');
  }

  async destroy(id: string): Promise<void> {
    await this.#db
      .deleteFrom('oauth_artifacts')
      .where('tenant_id', '=', this.#tenantId)
      .where('model', '=', this.#model)
      .where('id', '=', this.#key(id))
      .execute();
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    // node-oidc-provider revokes a grant's access tokens whenever it revokes the grant.
    if (this.#model === 'AccessToken')
      return endGrantSessions({ db: this.#db, bus: this.#bus }, this.#tenantId, grantId);
    await this.#db
      .deleteFrom('oauth_artifacts')
      .where('tenant_id', '=', this.#tenantId)
      .where('model', '=', this.#model)
      .where('grant_id', '=', grantId)
      .execute();
  }

  /**
   * The payload of a row that has not expired, with `consumed` (seconds) once it was used;
   * a refresh token used less than `refreshReuseIntervalMs` ago is still served as unused,
   * so that two tabs refreshing at once both rotate (the rule of Latchkey's own refresh
   * tokens, docs/design.md §5) and only a later replay revokes the grant.
   */
  #live(
    row:
      | {
          payload: string;
          expires_at: number | null;
          consumed_at: number | null;
          session_id: string | null;
        }
      | undefined,
  ): AdapterPayload | undefined {
    const now = Date.now();
    if (!row || (row.expires_at !== null && row.expires_at <= now)) return undefined;
    if (row.session_id) rememberSession(row.session_id);
    const payload = JSON.parse(row.payload) as AdapterPayload;
    const consumed = row.consumed_at;
    if (consumed === null) return payload;
    if (this.#model === 'RefreshToken' && now - consumed <= this.#reuseMs) return payload;
    return { ...payload, consumed: Math.floor(consumed / 1_000) };
  }
}

/**
 * When an interaction began (ms): its row's first write, which later saves keep. A sign-in
 * made since answers every reason the provider had to ask for one (docs/design.md §14).
 */
export async function interactionStartedAt(
  db: Kysely<Schema>,
  tenantId: string,
  uid: string,
): Promise<number | undefined> {
  const row = await db
    .selectFrom('oauth_artifacts')
    .select('created_at')
    .where('tenant_id', '=', tenantId)
    .where('model', '=', 'Interaction')
    .where('id', '=', uid)
    .executeTakeFirst();
  return row?.created_at;
}
