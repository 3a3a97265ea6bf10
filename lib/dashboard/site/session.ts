/**
 * Sign-in with oidc-client-ts: authorization code with PKCE against Cognito's managed login (in
 * the cloud) or the local stack's stand-in (`npm start`), the same code in both. Tokens live in
 * sessionStorage (gone with the tab) and the ID token, which the API verifies, is renewed with the
 * refresh token a minute before it expires. A session that cannot be renewed, or that the API
 * refuses (401), ends: the page shows the sign-in screen with the reason.
 */
import { type User, UserManager, WebStorageStateStore } from 'oidc-client-ts';
import type { DashboardConfig } from '../config.js';

export interface SessionState {
  readonly user: User | null;
  /** Why the user is signed out, when it was not their choice. */
  readonly notice: string | undefined;
}

export interface Session {
  state(): SessionState;
  subscribe(listener: (state: SessionState) => void): () => void;
  /** The ID token for `Authorization: Bearer`, while the session lasts. */
  idToken(): string | undefined;
  /** Goes to the sign-in page; comes back to `returnTo` (a `#/…` route). */
  signIn(returnTo: string): Promise<void>;
  signOut(): Promise<void>;
  /** Ends the session without the provider (the API refused the token). */
  end(notice: string): void;
}

/** The page's own URL without query or fragment: where the provider sends the user back. */
export const pageBase = (): URL => new URL('./', `${location.origin}${location.pathname}`);

const isCallback = (url: URL): boolean =>
  url.searchParams.has('state') && (url.searchParams.has('code') || url.searchParams.has('error'));

export const createSession = async (config: DashboardConfig): Promise<Session> => {
  const base = pageBase();
  const absolute = (u: string) => new URL(u, base).href;
  const { endpoints } = config.auth;
  const manager = new UserManager({
    authority: endpoints.issuer,
    // Given whole: no discovery request, and Cognito's discovery has no end_session_endpoint.
    metadata: {
      issuer: endpoints.issuer,
      authorization_endpoint: absolute(endpoints.authorization_endpoint),
      token_endpoint: absolute(endpoints.token_endpoint),
      revocation_endpoint: absolute(endpoints.revocation_endpoint),
      end_session_endpoint: absolute(endpoints.end_session_endpoint),
    },
    client_id: config.auth.clientId,
    redirect_uri: base.href,
    post_logout_redirect_uri: base.href,
    response_type: 'code',
    scope: config.auth.scope,
    userStore: new WebStorageStateStore({ store: sessionStorage }),
    stateStore: new WebStorageStateStore({ store: sessionStorage }),
    automaticSilentRenew: true,
    accessTokenExpiringNotificationTimeInSeconds: 60,
    loadUserInfo: false,
    monitorSession: false,
  });

  let current: SessionState = { user: null, notice: undefined };
  const listeners = new Set<(state: SessionState) => void>();
  const set = (next: SessionState) => {
    current = next;
    for (const l of listeners) l(next);
  };
  const end = (notice: string) => {
    void manager.removeUser();
    set({ user: null, notice });
  };

  const url = new URL(location.href);
  if (isCallback(url)) {
    try {
      const user = await manager.signinRedirectCallback();
      set({ user, notice: undefined });
      history.replaceState(null, '', `${base.pathname}${user.url_state ?? ''}`);
    } catch (e) {
      history.replaceState(null, '', base.pathname);
      const description = url.searchParams.get('error_description') ?? (e as Error).message;
      set({ user: null, notice: `Sign-in did not complete: ${description}` });
    }
  } else {
    const user = await manager.getUser();
    if (user && !user.expired) set({ user, notice: undefined });
    else if (user) await manager.removeUser();
  }

  manager.events.addUserLoaded((user) => set({ user, notice: undefined }));
  manager.events.addAccessTokenExpired(() => end('Your session has expired. Sign in again.'));
  manager.events.addSilentRenewError(() => {
    // The token may still be valid for a while: keep it, the expiry event ends the session.
    if (current.user?.expired !== false) end('Your session could not be renewed. Sign in again.');
  });

  return {
    state: () => current,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    idToken: () => (current.user && !current.user.expired ? current.user.id_token : undefined),
    signIn: (returnTo) => manager.signinRedirect({ url_state: returnTo }),
    async signOut() {
      // Revoke the refresh token (an ID token cannot be revoked; it lapses within the hour), forget
      // the tokens, then end the provider's own session: Cognito's /logout takes client_id and
      // logout_uri, which must be one of the app client's sign-out URLs.
      await manager.revokeTokens(['refresh_token']).catch(() => {});
      await manager.removeUser();
      const logout = new URL(absolute(endpoints.end_session_endpoint));
      logout.searchParams.set('client_id', config.auth.clientId);
      logout.searchParams.set('logout_uri', base.href);
      location.assign(logout.href);
    },
    end,
  };
};
