/**
 * Accounts: created on the first authenticated session request (contract), on the free plan.
 * The record is read on every request, strongly consistent and never cached, so that a plan
 * change (the admin command) applies on the very next request, on every warm function.
 * An account with a known email is findable by it through GSI1 (never a scan).
 */
export interface Account {
  readonly id: string;
  readonly email: string | null;
  readonly plan: string;
  readonly created_at: string;
}

export interface AccountStore {
  /** The caller's account, created on first use; `email` (a session's) is kept up to date. */
  ensure(accountId: string, email: string | undefined): Promise<Account>;
  /** The account, or undefined when it was never created. */
  get(accountId: string): Promise<Account | undefined>;
  /**
   * Puts the account on `plan` (the caller checks that the deployment has it). Undefined when
   * there is no such account: accounts come into being on their first session request.
   */
  setPlan(accountId: string, plan: string): Promise<{ before: Account; after: Account } | undefined>;
  /** Accounts whose email is `email` (case-insensitive), oldest first. Reads GSI1, never scans. */
  findByEmail(email: string): Promise<Account[]>;
}
