import { create } from 'zustand';
import type { AppInfo, Transport } from '../../../src/api/contract';
import type { ConsoleClient } from './consoleClient';
import type { ConnectionStatus } from './transport';

// Link to the console services (low rate: React state is fine).

export interface ConnectionState {
  /** 'unavailable': the page was opened without a transport (no preload, no token). */
  status: ConnectionStatus | 'unavailable';
  detail: string | null;
  transport: Transport | null;
  appInfo: AppInfo | null;
  client: ConsoleClient | null;
}

export const useConnectionStore = create<ConnectionState>(() => ({
  status: 'connecting',
  detail: null,
  transport: null,
  appInfo: null,
  client: null,
}));
