import type { ApiEvent, ApiMethod, ApiOutcome, ApiParams, Transport } from '../../../src/api/contract';

export type ConnectionStatus = 'connecting' | 'connected' | 'disconnected';

/** One way of reaching the console API: Electron IPC or the loopback WebSocket. */
export interface ApiTransport {
  readonly kind: Transport;
  invoke<M extends ApiMethod>(method: M, params: ApiParams<M>): Promise<ApiOutcome<M>>;
  /** Called on every status change, and once at once with the current status. */
  onStatus(listener: (status: ConnectionStatus, detail?: string) => void): () => void;
  /** Server→client pushes (live.frames, sim.end, …), validated against the contract's schema. */
  onEvent(listener: (event: ApiEvent) => void): () => void;
  close(): void;
}
