/** What every page needs: the API client and who is signed in. */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { ApiClient } from './api.js';

export interface DashboardContext {
  readonly api: ApiClient;
  /** The signed-in account's id (the ID token's sub), to tell own templates from others'. */
  readonly accountId: string;
}

export const Dashboard = createContext<DashboardContext | undefined>(undefined);

export const useDashboard = (): DashboardContext => {
  const context = useContext(Dashboard);
  if (!context) throw new Error('useDashboard outside <Dashboard.Provider>');
  return context;
};
