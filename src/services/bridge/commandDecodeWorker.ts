// The thread that decodes a g1-bridge/1 server's large commands (commandDecoder.ts): the whole of
// decodeCommand (the JSON, then every field checked), off the thread that relays state and hears STOP.

import { decodeCommand, type CommandValidation } from '../../domain/bridge/g1BridgeValidate';
import { serveTasks } from '../os/taskWorkerPort';
import type { CommandDecodeTask } from './commandDecoder';

serveTasks('commandDecodeWorker.ts', (task: CommandDecodeTask): { reply: CommandValidation } => ({
  reply: decodeCommand(task.bytes),
}));
