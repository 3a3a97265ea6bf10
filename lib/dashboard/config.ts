/**
 * What the dashboard page learns at run time from `config.json` beside it: where the API is and
 * how to sign in. The stack writes it at deploy time (lib/dashboard/dashboard.ts) and the local
 * stack serves its own (lib/local/dashboard.ts), so the page's code is the same in both places and
 * nothing is baked into the bundle. Plain data only: the page, the CDK app and the local server all
 * import this file.
 */

/** OAuth 2.0 / OpenID Connect endpoints, given whole so that the page needs no discovery fetch. */
export interface DashboardAuthEndpoints {
  /** The `iss` of the ID tokens (Cognito: `https://cognito-idp.<region>.amazonaws.com/<pool id>`). */
  readonly issuer: string;
  readonly authorization_endpoint: string;
  readonly token_endpoint: string;
  /** Revokes the refresh token on sign-out. */
  readonly revocation_endpoint: string;
  /**
   * Cognito's `/logout`, which takes `client_id` and `logout_uri` (not the OpenID
   * `post_logout_redirect_uri`); the local stand-in takes the same.
   */
  readonly end_session_endpoint: string;
}

export interface DashboardConfig {
  /** The API's base URL, ending with a slash; a path (locally `/`) is relative to the page's origin. */
  readonly apiUrl: string;
  readonly auth: {
    /** The dashboard's app client: authorization code with PKCE, no secret. */
    readonly clientId: string;
    readonly scope: string;
    /** URLs may be paths, relative to the page's origin (locally). */
    readonly endpoints: DashboardAuthEndpoints;
  };
  /** `local` when `npm start` serves the page: it then explains the local sign-in. */
  readonly environment: 'aws' | 'local';
  /**
   * What the usage page says about changing plans (plain text: whom to ask, a link's address).
   * @default a line saying that the deployment's operator changes plans (`npm run admin` locally)
   */
  readonly planContact?: string;
}

/** The scopes the dashboard asks for: an ID token with the email claim, which the API reads. */
export const DASHBOARD_SCOPE = 'openid email';

/** Cognito's managed login endpoints on a user pool domain (`https://<prefix>.auth.<region>.amazoncognito.com`). */
export const cognitoEndpoints = (domainUrl: string, issuer: string): DashboardAuthEndpoints => ({
  issuer,
  authorization_endpoint: `${domainUrl}/oauth2/authorize`,
  token_endpoint: `${domainUrl}/oauth2/token`,
  revocation_endpoint: `${domainUrl}/oauth2/revoke`,
  end_session_endpoint: `${domainUrl}/logout`,
});
