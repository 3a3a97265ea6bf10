/** What every page needs: the API client, who is signed in, and the deployment's config. */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { DashboardConfig } from '../config.js';
import type { ApiClient } from './api.js';

export interface DashboardContext {
  readonly api: ApiClient;
  /** The signed-in account's id (the ID token's sub), to tell own templates from others'. */
  readonly accountId: string;
  readonly config: DashboardConfig;
  /** The API's base URL, absolute (config.apiUrl may be a path): what code snippets call. */
  readonly apiUrl: string;
}

export const Dashboard = createContext<DashboardContext | undefined>(undefined);

export const useDashboard = (): DashboardContext => {
  const context = useContext(Dashboard);
  if (!context) throw new Error('useDashboard outside <Dashboard.Provider>');
  return context;
};
