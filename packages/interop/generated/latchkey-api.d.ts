export interface paths {
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The process is up */
        get: operations["getHealth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The database (and Redis, when configured) answer */
        get: operations["getReadiness"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Prometheus metrics (Authorization: Bearer METRICS_TOKEN; off when unset) */
        get: operations["getMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This OpenAPI document */
        get: operations["getOpenApiDocument"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/auth/sign-up": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create a user with e-mail and password */
        post: operations["signUp"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/auth/sign-in": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Sign a user in with e-mail and password; starts a session
         * @description A wrong password and an unknown e-mail get the same 401 invalid_credentials. Repeated failures are slowed, then refused with 429 (README, "Sign-in failures"). A user with a second factor gets 403 mfa_required with mfaToken and factors: finish at POST /v1/auth/sign-in/verify. Under the required policy a user without one gets 403 mfa_setup_required with userId.
         */
        post: operations["signIn"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/auth/sign-in/verify": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Finish a sign-in with its second factor: the mfaToken and a code
         * @description The mfaToken of a 403 mfa_required works once, for 5 minutes, on its tenant. A wrong code is 401 invalid_code; 5 wrong codes end the mfaToken (429), and the account allows 10 per 15 minutes over all its sign-ins.
         */
        post: operations["verifySignIn"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/auth/token": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Exchange a refresh token for new tokens (the refresh token rotates)
         * @description Presenting a refresh token again more than 5 s after its rotation revokes its whole session; within those seconds (two tabs at once) it gets a new pair.
         */
        post: operations["refreshTokens"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/auth/sign-out": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * End the session of a refresh token
         * @description Answers 204 whether or not the token was known (RFC 7009 section 2.2).
         */
        post: operations["signOut"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List users, oldest first, with cursor pagination */
        get: operations["listUsers"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{userId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a user */
        get: operations["getUser"];
        put?: never;
        post?: never;
        /** Delete a user and every session of theirs */
        delete: operations["deleteUser"];
        options?: never;
        head?: never;
        /** Update a user: name, metadata, roles, disabled */
        patch: operations["updateUser"];
        trace?: never;
    };
    "/v1/users/{userId}/sessions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List a user's sessions, newest first */
        get: operations["listUserSessions"];
        put?: never;
        post?: never;
        /** Revoke every session of a user (sign out everywhere) */
        delete: operations["revokeUserSessions"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sessions/{sessionId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke one session */
        delete: operations["revokeSession"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/operator/tenants": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List tenants, oldest first, a page at a time; search by name or id */
        get: operations["listTenants"];
        put?: never;
        /** Create a tenant with its signing key, a secret key and a publishable key (the secret key is returned only now) */
        post: operations["createTenant"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/operator/tenants/{tenantId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a tenant */
        get: operations["getTenant"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** Change a tenant's settings; what is not sent stays as it is */
        patch: operations["updateTenant"];
        trace?: never;
    };
    "/v1/users/{userId}/factors": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List a user's second factors (never their secrets) */
        get: operations["listFactors"];
        put?: never;
        /**
         * Start an authenticator app (TOTP) for a user; confirm it with a first code
         * @description The secret and otpauthUri are shown only in this answer: show the URI as a QR code and the secret as text. The factor is not used until it is confirmed; starting another replaces an unconfirmed one.
         */
        post: operations["createFactor"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{userId}/factors/{factorId}/confirm": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Confirm an authenticator app with a first code: the factor is live
         * @description A wrong code is 422 with errors[].code code_invalid; the code used here cannot sign in afterwards.
         */
        post: operations["confirmFactor"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{userId}/recovery-codes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Make ten new recovery codes for a user; older ones stop working
         * @description The codes are shown only in this answer; each works once.
         */
        post: operations["createRecoveryCodes"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/users/{userId}/factors/{factorId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Remove a user's factor (an operator resets a lost device)
         * @description recovery_code removes all the recovery codes. Under the required policy the user sets up a new factor at the next sign-in.
         */
        delete: operations["deleteFactor"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/t/{tenantId}/.well-known/jwks.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The tenant's public signing keys (RFC 7517) */
        get: operations["getJwks"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/t/{tenantId}/oauth/userinfo": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The signed-in user's claims (OpenID Connect Core section 5.3)
         * @description Bearer access token of the tenant, with the `openid` scope; the claims its scopes allow (`email`, `profile`). Errors are RFC 6750 (`WWW-Authenticate`).
         */
        get: operations["oauthUserinfoGet"];
        put?: never;
        /**
         * The signed-in user's claims (OpenID Connect Core section 5.3)
         * @description Bearer access token of the tenant, with the `openid` scope; the claims its scopes allow (`email`, `profile`). Errors are RFC 6750 (`WWW-Authenticate`).
         */
        post: operations["oauthUserinfoPost"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/public/config": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The tenant's public configuration, for the browser libraries */
        get: operations["getPublicConfig"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/client/token": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Browser token endpoint: redeem a PKCE sign-in code, or rotate a refresh token
         * @description grant_type=authorization_code with code and code_verifier (RFC 7636, S256), or grant_type=refresh_token. Publishable key; the Origin must be an allowed origin of the tenant.
         */
        post: operations["exchangeClientToken"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/client/sign-out": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Browser sign-out: end the session of a refresh token
         * @description Publishable key; the Origin must be an allowed origin of the tenant. The access tokens of the session introspect inactive at once. Answers 204 whether or not the token was known (RFC 7009 section 2.2); a refresh token issued to a server (POST /v1/auth/sign-in) is refused with 400 invalid_grant and stays valid.
         */
        post: operations["clientSignOut"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/client/user": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The signed-in user's profile, for the browser
         * @description Publishable key (X-Latchkey-Publishable-Key) and the user's access token (Authorization: Bearer); the Origin must be an allowed origin of the tenant. An access token that introspects inactive (expired, revoked, of another tenant, its user disabled or deleted) is refused with 401. Of the user's metadata only its `public` member (when an object) is shown, as publicMetadata. `picture` is the https picture URL of the user's most recently used provider identity that has one, else null.
         */
        get: operations["getClientUser"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/introspect": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Is this access token active for my tenant? (RFC 7662)
         * @description Inactive when the token is invalid, expired, of another tenant, or its session is revoked or its user disabled or deleted; an m2m app's client-credentials token (sub = client_id = the app's id, no sid, email or roles) is active while its app exists. The caller is a secret key of the tenant, or a web or m2m app of it with its client credentials. A missing `token` is a bad request (400).
         */
        post: operations["introspectToken"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/t/{tenantId}/.well-known/openid-configuration": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The tenant's OpenID Provider metadata (OpenID Connect Discovery 1.0)
         * @description Served by the tenant's OpenID Provider (node-oidc-provider; docs/design.md §14). OAuth errors are `{ "error", "error_description" }` (RFC 6749 section 5.2), not problem documents.
         */
        get: operations["getOpenIdConfiguration"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/.well-known/oauth-authorization-server/t/{tenantId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The tenant's authorization server metadata (RFC 8414)
         * @description Served by the tenant's OpenID Provider (node-oidc-provider; docs/design.md §14). OAuth errors are `{ "error", "error_description" }` (RFC 6749 section 5.2), not problem documents.
         */
        get: operations["getAuthorizationServerMetadata"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/t/{tenantId}/oauth/authorize": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Authorization endpoint (authorization code with PKCE S256)
         * @description Served by the tenant's OpenID Provider (node-oidc-provider; docs/design.md §14). OAuth errors are `{ "error", "error_description" }` (RFC 6749 section 5.2), not problem documents.
         */
        get: operations["oauthAuthorizeGET"];
        put?: never;
        /**
         * Authorization endpoint (authorization code with PKCE S256)
         * @description Served by the tenant's OpenID Provider (node-oidc-provider; docs/design.md §14). OAuth errors are `{ "error", "error_description" }` (RFC 6749 section 5.2), not problem documents.
         */
        post: operations["oauthAuthorizePOST"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/t/{tenantId}/oauth/authorize/{uid}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Where a finished sign-in resumes its authorization request
         * @description Served by the tenant's OpenID Provider (node-oidc-provider; docs/design.md §14). OAuth errors are `{ "error", "error_description" }` (RFC 6749 section 5.2), not problem documents.
         */
        get: operations["oauthAuthorizeResume"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/t/{tenantId}/oauth/token": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Token endpoint: authorization_code, refresh_token (rotated), client_credentials (m2m apps)
         * @description Served by the tenant's OpenID Provider (node-oidc-provider; docs/design.md §14). OAuth errors are `{ "error", "error_description" }` (RFC 6749 section 5.2), not problem documents.
         */
        post: operations["oauthToken"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/t/{tenantId}/oauth/revoke": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Token revocation (RFC 7009): a refresh token ends its grant and session
         * @description Served by the tenant's OpenID Provider (node-oidc-provider; docs/design.md §14). OAuth errors are `{ "error", "error_description" }` (RFC 6749 section 5.2), not problem documents.
         */
        post: operations["oauthRevoke"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/t/{tenantId}/oauth/register": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Dynamic client registration (RFC 7591), when the tenant turns it on (`--dynamic-registration on`)
         * @description Served by the tenant's OpenID Provider (node-oidc-provider; docs/design.md §14). OAuth errors are `{ "error", "error_description" }` (RFC 6749 section 5.2), not problem documents.
         */
        post: operations["oauthRegister"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/t/{tenantId}/oauth/end-session": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0)
         * @description Served by the tenant's OpenID Provider (node-oidc-provider; docs/design.md §14). OAuth errors are `{ "error", "error_description" }` (RFC 6749 section 5.2), not problem documents.
         */
        get: operations["oauthEndSessionGET"];
        put?: never;
        /**
         * RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0)
         * @description Served by the tenant's OpenID Provider (node-oidc-provider; docs/design.md §14). OAuth errors are `{ "error", "error_description" }` (RFC 6749 section 5.2), not problem documents.
         */
        post: operations["oauthEndSessionPOST"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/t/{tenantId}/oauth/end-session/confirm": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The logout page's answer
         * @description Served by the tenant's OpenID Provider (node-oidc-provider; docs/design.md §14). OAuth errors are `{ "error", "error_description" }` (RFC 6749 section 5.2), not problem documents.
         */
        post: operations["oauthEndSessionConfirm"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/t/{tenantId}/oauth/end-session/success": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Signed out, when the app gave no post_logout_redirect_uri
         * @description Served by the tenant's OpenID Provider (node-oidc-provider; docs/design.md §14). OAuth errors are `{ "error", "error_description" }` (RFC 6749 section 5.2), not problem documents.
         */
        get: operations["oauthEndSessionSuccess"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface webhooks {
    "user.created": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * user.created
         * @description A user was made (a sign-up, by any path). Verify the signature (Standard Webhooks) over the raw body before reading it; delivery is at least once.
         */
        post: operations["webhook.user.created"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "user.updated": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * user.updated
         * @description A user's profile, metadata, roles, e-mail verification or disabled state changed. Verify the signature (Standard Webhooks) over the raw body before reading it; delivery is at least once.
         */
        post: operations["webhook.user.updated"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "user.deleted": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * user.deleted
         * @description A user was deleted. Verify the signature (Standard Webhooks) over the raw body before reading it; delivery is at least once.
         */
        post: operations["webhook.user.deleted"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "session.created": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * session.created
         * @description A user signed in: a new session (server, browser or an OAuth client). Verify the signature (Standard Webhooks) over the raw body before reading it; delivery is at least once.
         */
        post: operations["webhook.session.created"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "session.ended": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * session.ended
         * @description A session ended: signed out, revoked, or ended with its user, grant or app. Verify the signature (Standard Webhooks) over the raw body before reading it; delivery is at least once.
         */
        post: operations["webhook.session.ended"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "user.factor_added": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * user.factor_added
         * @description A second factor was set up: an authenticator app confirmed, a passkey, recovery codes. Verify the signature (Standard Webhooks) over the raw body before reading it; delivery is at least once.
         */
        post: operations["webhook.user.factor_added"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "user.factor_removed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * user.factor_removed
         * @description A second factor was removed. Verify the signature (Standard Webhooks) over the raw body before reading it; delivery is at least once.
         */
        post: operations["webhook.user.factor_removed"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface components {
    schemas: {
        /** Problem */
        Problem: {
            type: string;
            title: string;
            status: number;
            detail: string;
            /** @description Stable snake_case error code */
            code: string;
            errors?: {
                path: string;
                code: string;
                message: string;
            }[];
            /** @description mfa_required: redeem at POST /v1/auth/sign-in/verify */
            mfaToken?: string;
            /** @description mfa_required: e.g. ["totp","recovery_code"] */
            factors?: string[];
            /** @description mfa_setup_required: the user to enrol */
            userId?: string;
        };
        /** User */
        User: {
            /** Format: uuid */
            id: string;
            email: string;
            name: string | null;
            metadata: {
                [key: string]: unknown;
            };
            roles: string[];
            emailVerified: boolean;
            disabled: boolean;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        /** Session */
        Session: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            userId: string;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            lastUsedAt: string;
            /** Format: date-time */
            expiresAt: string;
            revokedAt: string | null;
            revokedReason: string | null;
            ip: string | null;
            userAgent: string | null;
        };
        /** Factor */
        Factor: {
            /** @description A UUID (an app's or a passkey's); the recovery codes, one factor, are recovery_code */
            id: string;
            type: "totp" | "passkey" | "recovery_code";
            name: string;
            /** @description An authenticator app is live once a code confirms it */
            confirmed: boolean;
            /** Format: date-time */
            createdAt: string;
            lastUsedAt: string | null;
            /** @description Recovery codes left unused */
            remaining?: number;
        };
        /** Tenant */
        Tenant: {
            /** Format: uuid */
            id: string;
            name: string;
            plan: "free" | "pro" | "enterprise";
            limits: {
                rps: number;
                rpm: number;
            };
            environment: "development" | "production";
            allowedOrigins: string[];
            requireEmailVerification: boolean;
            accessTokenTtl: number;
            passwordEnabled: boolean;
            mfaPolicy: "off" | "optional" | "required";
            passkeysEnabled: boolean;
            dynamicRegistration: boolean;
            branding: {
                logoUrl: string | null;
                primaryColor: string | null;
            };
            audience: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        status: string;
                    };
                };
            };
        };
    };
    getReadiness: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        status: string;
                        checks: {
                            database: string;
                            redis: string;
                        };
                    };
                };
            };
            /** @description Default Response */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        status: string;
                        checks: {
                            database: string;
                            redis: string;
                        };
                    };
                };
            };
        };
    };
    getMetrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    getOpenApiDocument: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    signUp: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * Format: email
                     * @description Trimmed; matched case-insensitively within the tenant.
                     * @example ada@example.com
                     */
                    email: string;
                    /** @description 8 to 1024 Unicode code points. Never truncated. */
                    password: string;
                    /** @description Display name. */
                    name?: string;
                    /** @description Free-form JSON object: at most 50 keys of 1 to 64 characters (not __proto__, constructor, prototype), 8192 bytes serialised. */
                    metadata?: {
                        [key: string]: unknown;
                    };
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: uuid */
                        userId: string;
                        email: string;
                        /** Format: date-time */
                        createdAt: string;
                        verificationRequired: boolean;
                    };
                };
            };
            /** @description Bad request (invalid_request) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong key (unauthorized) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Wrong key kind or scope (forbidden) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Conflict, e.g. email_taken */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Payload too large (payload_too_large) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported media type (unsupported_media_type) */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Field rules failed (validation_failed, with errors[]) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limited (rate_limited), with Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    signIn: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    email: string;
                    password: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description RS256 JWT (typ at+jwt); verify locally or introspect */
                        accessToken: string;
                        /** @enum {string} */
                        tokenType: "Bearer";
                        /** @description Seconds until the access token expires */
                        expiresIn: number;
                        /** @description Opaque; works once: each use returns a new one */
                        refreshToken: string;
                        /** Format: uuid */
                        sessionId: string;
                        user: components["schemas"]["User"];
                    };
                };
            };
            /** @description Bad request (invalid_request) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong key (unauthorized) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Wrong key kind or scope (forbidden) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Payload too large (payload_too_large) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported media type (unsupported_media_type) */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Field rules failed (validation_failed, with errors[]) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limited (rate_limited), with Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    verifySignIn: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    mfaToken: string;
                    /** @description An authenticator app's 6 digits, or a recovery code */
                    code: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description RS256 JWT (typ at+jwt); verify locally or introspect */
                        accessToken: string;
                        /** @enum {string} */
                        tokenType: "Bearer";
                        /** @description Seconds until the access token expires */
                        expiresIn: number;
                        /** @description Opaque; works once: each use returns a new one */
                        refreshToken: string;
                        /** Format: uuid */
                        sessionId: string;
                        user: components["schemas"]["User"];
                    };
                };
            };
            /** @description Bad request (invalid_request) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong key (unauthorized) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Wrong key kind or scope (forbidden) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Payload too large (payload_too_large) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported media type (unsupported_media_type) */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Field rules failed (validation_failed, with errors[]) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limited (rate_limited), with Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    refreshTokens: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    refreshToken: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description RS256 JWT (typ at+jwt); verify locally or introspect */
                        accessToken: string;
                        /** @enum {string} */
                        tokenType: "Bearer";
                        /** @description Seconds until the access token expires */
                        expiresIn: number;
                        /** @description Opaque; works once: each use returns a new one */
                        refreshToken: string;
                        /** Format: uuid */
                        sessionId: string;
                        user: components["schemas"]["User"];
                    };
                };
            };
            /** @description Bad request (invalid_request) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong key (unauthorized) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Wrong key kind or scope (forbidden) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Payload too large (payload_too_large) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported media type (unsupported_media_type) */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Field rules failed (validation_failed, with errors[]) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limited (rate_limited), with Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    signOut: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    refreshToken: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request (invalid_request) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong key (unauthorized) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Wrong key kind or scope (forbidden) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Payload too large (payload_too_large) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported media type (unsupported_media_type) */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Field rules failed (validation_failed, with errors[]) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limited (rate_limited), with Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listUsers: {
        parameters: {
            query?: {
                /** @description Exact address, matched case-insensitively */
                email?: string;
                /** @description Part of an address or a name, matched in any case */
                query?: string;
                /** @description 1 to 100, default 20 */
                limit?: string;
                /** @description nextCursor of the previous page */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["User"][];
                        nextCursor: string | null;
                    };
                };
            };
            /** @description Bad request (invalid_request) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong key (unauthorized) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Wrong key kind or scope (forbidden) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Field rules failed (validation_failed, with errors[]) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limited (rate_limited), with Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getUser: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                userId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description Missing or wrong key (unauthorized) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Wrong key kind or scope (forbidden) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found (not_found) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limited (rate_limited), with Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteUser: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                userId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or wrong key (unauthorized) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Wrong key kind or scope (forbidden) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found (not_found) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limited (rate_limited), with Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    updateUser: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                userId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name?: string | null;
                    /** @description Replaces the whole metadata object: at most 50 keys of 1 to 64 characters (not __proto__, constructor, prototype), 8192 bytes serialised. */
                    metadata?: {
                        [key: string]: unknown;
                    };
                    roles?: string[];
                    /** @description Disabling also revokes every session */
                    disabled?: boolean;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description Bad request (invalid_request) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong key (unauthorized) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Wrong key kind or scope (forbidden) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found (not_found) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Payload too large (payload_too_large) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported media type (unsupported_media_type) */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Field rules failed (validation_failed, with errors[]) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limited (rate_limited), with Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listUserSessions: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                userId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Session"][];
                    };
                };
            };
            /** @description Missing or wrong key (unauthorized) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Wrong key kind or scope (forbidden) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found (not_found) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limited (rate_limited), with Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    revokeUserSessions: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                userId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or wrong key (unauthorized) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Wrong key kind or scope (forbidden) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found (not_found) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limited (rate_limited), with Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    revokeSession: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                sessionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or wrong key (unauthorized) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Wrong key kind or scope (forbidden) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found (not_found) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limited (rate_limited), with Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listTenants: {
        parameters: {
            query?: {
                /** @description Part of a name or an id, in any case */
                search?: string;
                /** @description next of the previous page: a tenant id */
                after?: string;
                /** @description 1 to 100, default 50 */
                limit?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Tenant"][];
                        /** @description Pass as after for the next page; null on the last */
                        next: string | null;
                    };
                };
            };
            /** @description Bad request (invalid_request) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong key (unauthorized) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Wrong key kind or scope (forbidden) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Field rules failed (validation_failed, with errors[]) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limited (rate_limited), with Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    createTenant: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name: string;
                    /** @description free, pro, enterprise */
                    plan?: string;
                    /** @description Enterprise plan only */
                    rps?: number;
                    /** @description Enterprise plan only */
                    rpm?: number;
                    allowedOrigins?: string[];
                    requireEmailVerification?: boolean;
                    accessTokenTtl?: number;
                    passwordEnabled?: boolean;
                    /** @description off, optional, required */
                    mfaPolicy?: string;
                    passkeysEnabled?: boolean;
                    dynamicRegistration?: boolean;
                    logoUrl?: string | null;
                    primaryColor?: string | null;
                    audience?: string | null;
                    /** @description development, production (never changes) */
                    environment?: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        tenant: components["schemas"]["Tenant"];
                        /** @description sk_test_… or sk_prod_…; shown only now */
                        secretKey: string;
                        publishableKey: string;
                    };
                };
            };
            /** @description Bad request (invalid_request) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong key (unauthorized) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Wrong key kind or scope (forbidden) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Payload too large (payload_too_large) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported media type (unsupported_media_type) */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Field rules failed (validation_failed, with errors[]) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limited (rate_limited), with Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getTenant: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenantId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Tenant"];
                };
            };
            /** @description Missing or wrong key (unauthorized) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Wrong key kind or scope (forbidden) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found (not_found) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limited (rate_limited), with Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    updateTenant: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenantId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name?: string;
                    /** @description free, pro, enterprise */
                    plan?: string;
                    /** @description Enterprise plan only */
                    rps?: number;
                    /** @description Enterprise plan only */
                    rpm?: number;
                    allowedOrigins?: string[];
                    requireEmailVerification?: boolean;
                    accessTokenTtl?: number;
                    passwordEnabled?: boolean;
                    /** @description off, optional, required */
                    mfaPolicy?: string;
                    passkeysEnabled?: boolean;
                    dynamicRegistration?: boolean;
                    logoUrl?: string | null;
                    primaryColor?: string | null;
                    audience?: string | null;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Tenant"];
                };
            };
            /** @description Bad request (invalid_request) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong key (unauthorized) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Wrong key kind or scope (forbidden) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found (not_found) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Payload too large (payload_too_large) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported media type (unsupported_media_type) */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Field rules failed (validation_failed, with errors[]) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limited (rate_limited), with Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listFactors: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                userId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Factor"][];
                    };
                };
            };
            /** @description Missing or wrong key (unauthorized) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Wrong key kind or scope (forbidden) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found (not_found) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limited (rate_limited), with Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    createFactor: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                userId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @enum {string} */
                    type: "totp";
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: uuid */
                        id: string;
                        /** @enum {string} */
                        type: "totp";
                        /** @enum {boolean} */
                        confirmed: false;
                        /** @description Base32 (RFC 4648), for typing in by hand */
                        secret: string;
                        /** @description otpauth://totp/… for a QR code */
                        otpauthUri: string;
                    };
                };
            };
            /** @description Bad request (invalid_request) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong key (unauthorized) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Wrong key kind or scope (forbidden) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found (not_found) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Conflict, e.g. email_taken */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Payload too large (payload_too_large) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported media type (unsupported_media_type) */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Field rules failed (validation_failed, with errors[]) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limited (rate_limited), with Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    confirmFactor: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                userId: string;
                factorId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description The 6 digits the app shows */
                    code: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Factor"];
                };
            };
            /** @description Bad request (invalid_request) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong key (unauthorized) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Wrong key kind or scope (forbidden) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found (not_found) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Conflict, e.g. email_taken */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Payload too large (payload_too_large) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported media type (unsupported_media_type) */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Field rules failed (validation_failed, with errors[]) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limited (rate_limited), with Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    createRecoveryCodes: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                userId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        codes: string[];
                    };
                };
            };
            /** @description Missing or wrong key (unauthorized) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Wrong key kind or scope (forbidden) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found (not_found) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limited (rate_limited), with Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteFactor: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                userId: string;
                factorId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or wrong key (unauthorized) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Wrong key kind or scope (forbidden) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not found (not_found) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limited (rate_limited), with Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getJwks: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenantId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        keys: {
                            [key: string]: string;
                        }[];
                    };
                };
            };
            /** @description Not found (not_found) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    oauthUserinfoGet: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenantId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        sub: string;
                        email?: string;
                        email_verified?: boolean;
                        name?: string;
                    };
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: string;
                        error_description: string;
                    };
                };
            };
            /** @description Default Response */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: string;
                        error_description: string;
                    };
                };
            };
        };
    };
    oauthUserinfoPost: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenantId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        sub: string;
                        email?: string;
                        email_verified?: boolean;
                        name?: string;
                    };
                };
            };
            /** @description Default Response */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: string;
                        error_description: string;
                    };
                };
            };
            /** @description Default Response */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: string;
                        error_description: string;
                    };
                };
            };
        };
    };
    getPublicConfig: {
        parameters: {
            query?: {
                pk?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        tenantId: string;
                        name: string;
                        environment: string;
                        branding: {
                            logoUrl: string | null;
                            primaryColor: string | null;
                        };
                        providers: {
                            id: string;
                            name: string;
                            mode: "development" | "live";
                        }[];
                        passwordEnabled: boolean;
                        signInUrl: string;
                    };
                };
            };
            /** @description Default Response */
            304: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or wrong key (unauthorized) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Wrong key kind or scope (forbidden) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    exchangeClientToken: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    grant_type: "authorization_code" | "refresh_token";
                    code?: string;
                    code_verifier?: string;
                    refresh_token?: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        accessToken: string;
                        /** @enum {string} */
                        tokenType: "Bearer";
                        expiresIn: number;
                        refreshToken: string;
                        sessionId: string;
                    };
                };
            };
            /** @description Bad request (invalid_request) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong key (unauthorized) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Wrong key kind or scope (forbidden) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported media type (unsupported_media_type) */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Field rules failed (validation_failed, with errors[]) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limited (rate_limited), with Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    clientSignOut: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    refresh_token: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request (invalid_request) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong key (unauthorized) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Wrong key kind or scope (forbidden) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported media type (unsupported_media_type) */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Field rules failed (validation_failed, with errors[]) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limited (rate_limited), with Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getClientUser: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        email: string;
                        emailVerified: boolean;
                        name: string | null;
                        picture: string | null;
                        publicMetadata: {
                            [key: string]: unknown;
                        };
                        /** Format: date-time */
                        createdAt: string;
                    };
                };
            };
            /** @description Missing or wrong key (unauthorized) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Wrong key kind or scope (forbidden) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limited (rate_limited), with Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    introspectToken: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description The access token to check */
                    token: string;
                    token_type_hint?: string;
                    /** @description client_secret_post: the tenant id, or a web or m2m app's id (app_…) */
                    client_id?: string;
                    /** @description client_secret_post: a secret key, or the app's client secret */
                    client_secret?: string;
                };
                "application/x-www-form-urlencoded": {
                    /** @description The access token to check */
                    token: string;
                    token_type_hint?: string;
                    /** @description client_secret_post: the tenant id, or a web or m2m app's id (app_…) */
                    client_id?: string;
                    /** @description client_secret_post: a secret key, or the app's client secret */
                    client_secret?: string;
                };
            };
        };
        responses: {
            /** @description An inactive answer is exactly {"active":false}. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        active: boolean;
                        sub?: string;
                        email?: string;
                        tid?: string;
                        sid?: string;
                        roles?: string[];
                        scope?: string;
                        exp?: number;
                        iat?: number;
                        iss?: string;
                        jti?: string;
                        /** @description The tenant's API audience (RFC 9068) */
                        aud?: string;
                        /** @description RFC 9068: the tenant id (the hosted flow's tokens), or the id of the app the token was issued to */
                        client_id?: string;
                        /** @description How the user authenticated for this session (RFC 8176: pwd, fed); absent on sessions older than it */
                        amr?: string[];
                        /** @description When the user authenticated for this session, seconds since the epoch */
                        auth_time?: number;
                        token_type?: string;
                    };
                };
            };
            /** @description Bad request (invalid_request) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong key (unauthorized) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Wrong key kind or scope (forbidden) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Payload too large (payload_too_large) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported media type (unsupported_media_type) */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Rate limited (rate_limited), with Retry-After */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getOpenIdConfiguration: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenantId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    getAuthorizationServerMetadata: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenantId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    oauthAuthorizeGET: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenantId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    oauthAuthorizePOST: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenantId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    oauthAuthorizeResume: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenantId: string;
                uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    oauthToken: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenantId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    oauthRevoke: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenantId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    oauthRegister: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenantId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    oauthEndSessionGET: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenantId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    oauthEndSessionPOST: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenantId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    oauthEndSessionConfirm: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenantId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    oauthEndSessionSuccess: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenantId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    "webhook.user.created": {
        parameters: {
            query?: never;
            header: {
                /** @description The message id (msg_...): the same in every retry and resend; dedupe by it */
                "webhook-id": string;
                /** @description Unix seconds when this attempt was signed */
                "webhook-timestamp": string;
                /** @description v1,<base64 HMAC-SHA256>, space-separated: two during a secret rotation grace period */
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @constant */
                    type: "user.created";
                    /**
                     * Format: date-time
                     * @description When the event happened
                     */
                    timestamp: string;
                    data: components["schemas"]["User"];
                };
            };
        };
        responses: {
            /** @description Any 2xx within 15 s is success; anything else, or no answer, is retried with the same webhook-id */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    "webhook.user.updated": {
        parameters: {
            query?: never;
            header: {
                /** @description The message id (msg_...): the same in every retry and resend; dedupe by it */
                "webhook-id": string;
                /** @description Unix seconds when this attempt was signed */
                "webhook-timestamp": string;
                /** @description v1,<base64 HMAC-SHA256>, space-separated: two during a secret rotation grace period */
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @constant */
                    type: "user.updated";
                    /**
                     * Format: date-time
                     * @description When the event happened
                     */
                    timestamp: string;
                    data: components["schemas"]["User"];
                };
            };
        };
        responses: {
            /** @description Any 2xx within 15 s is success; anything else, or no answer, is retried with the same webhook-id */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    "webhook.user.deleted": {
        parameters: {
            query?: never;
            header: {
                /** @description The message id (msg_...): the same in every retry and resend; dedupe by it */
                "webhook-id": string;
                /** @description Unix seconds when this attempt was signed */
                "webhook-timestamp": string;
                /** @description v1,<base64 HMAC-SHA256>, space-separated: two during a secret rotation grace period */
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @constant */
                    type: "user.deleted";
                    /**
                     * Format: date-time
                     * @description When the event happened
                     */
                    timestamp: string;
                    data: {
                        /** Format: uuid */
                        id: string;
                        email: string;
                    };
                };
            };
        };
        responses: {
            /** @description Any 2xx within 15 s is success; anything else, or no answer, is retried with the same webhook-id */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    "webhook.session.created": {
        parameters: {
            query?: never;
            header: {
                /** @description The message id (msg_...): the same in every retry and resend; dedupe by it */
                "webhook-id": string;
                /** @description Unix seconds when this attempt was signed */
                "webhook-timestamp": string;
                /** @description v1,<base64 HMAC-SHA256>, space-separated: two during a secret rotation grace period */
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @constant */
                    type: "session.created";
                    /**
                     * Format: date-time
                     * @description When the event happened
                     */
                    timestamp: string;
                    data: {
                        /** Format: uuid */
                        id: string;
                        /** Format: uuid */
                        userId: string;
                        channel: "server" | "browser" | "oauth";
                        /** Format: date-time */
                        createdAt: string;
                        /** Format: date-time */
                        expiresAt: string;
                        ip: string | null;
                        userAgent: string | null;
                        /** @description The OAuth client (app_...) of an oauth session */
                        clientId?: string;
                    };
                };
            };
        };
        responses: {
            /** @description Any 2xx within 15 s is success; anything else, or no answer, is retried with the same webhook-id */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    "webhook.session.ended": {
        parameters: {
            query?: never;
            header: {
                /** @description The message id (msg_...): the same in every retry and resend; dedupe by it */
                "webhook-id": string;
                /** @description Unix seconds when this attempt was signed */
                "webhook-timestamp": string;
                /** @description v1,<base64 HMAC-SHA256>, space-separated: two during a secret rotation grace period */
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @constant */
                    type: "session.ended";
                    /**
                     * Format: date-time
                     * @description When the event happened
                     */
                    timestamp: string;
                    data: {
                        /** Format: uuid */
                        id: string;
                        /** Format: uuid */
                        userId: string;
                        /** @description Why it ended, e.g. signed_out */
                        reason: string;
                        /** Format: date-time */
                        endedAt: string;
                    };
                };
            };
        };
        responses: {
            /** @description Any 2xx within 15 s is success; anything else, or no answer, is retried with the same webhook-id */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    "webhook.user.factor_added": {
        parameters: {
            query?: never;
            header: {
                /** @description The message id (msg_...): the same in every retry and resend; dedupe by it */
                "webhook-id": string;
                /** @description Unix seconds when this attempt was signed */
                "webhook-timestamp": string;
                /** @description v1,<base64 HMAC-SHA256>, space-separated: two during a secret rotation grace period */
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @constant */
                    type: "user.factor_added";
                    /**
                     * Format: date-time
                     * @description When the event happened
                     */
                    timestamp: string;
                    /** @description The user and the factor, never its secret */
                    data: {
                        /** Format: uuid */
                        userId: string;
                        factor: components["schemas"]["Factor"];
                    };
                };
            };
        };
        responses: {
            /** @description Any 2xx within 15 s is success; anything else, or no answer, is retried with the same webhook-id */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    "webhook.user.factor_removed": {
        parameters: {
            query?: never;
            header: {
                /** @description The message id (msg_...): the same in every retry and resend; dedupe by it */
                "webhook-id": string;
                /** @description Unix seconds when this attempt was signed */
                "webhook-timestamp": string;
                /** @description v1,<base64 HMAC-SHA256>, space-separated: two during a secret rotation grace period */
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @constant */
                    type: "user.factor_removed";
                    /**
                     * Format: date-time
                     * @description When the event happened
                     */
                    timestamp: string;
                    /** @description The user and the factor, never its secret */
                    data: {
                        /** Format: uuid */
                        userId: string;
                        factor: components["schemas"]["Factor"];
                    };
                };
            };
        };
        responses: {
            /** @description Any 2xx within 15 s is success; anything else, or no answer, is retried with the same webhook-id */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
}
