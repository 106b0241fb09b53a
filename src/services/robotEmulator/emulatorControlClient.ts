import { Buffer } from 'node:buffer';
import WebSocket from 'ws';
import {
  declaresEmulatorControl,
  EMULATOR_CONTROL_SCHEMA_NAME,
  EMULATOR_CONTROL_STATUS_ID,
  EMULATOR_CONTROL_TOPIC,
  type EmulatorControlAction,
} from '../../domain/robotEmulator/emulatorControl';
import { FOXGLOVE_SUBPROTOCOL, FoxgloveClient } from '../robotLink/foxgloveWs';

// One `/emulator/control` action sent to a running robot emulator and its answer read back
// (docs/ROBOT_EMULATOR.md §5): a short-lived Foxglove client of its own — connect, read the
// serverInfo (the server must declare `emulator_control`, else nothing is sent), advertise the
// channel, publish the action, wait for the emulator's `emulator/control/ok` or `…/refused`
// status, close. Used by `motionbench emulate-robot-reset` and the console's robot.emulatorReset;
// never by the robot link itself, which speaks only g1-bridge/1.

export interface EmulatorControlAnswer {
  ok: boolean;
  message: string;
}

/** Refused before anything was sent: not an emulator, unreachable, or no answer in time. */
export class EmulatorControlError extends Error {
  override readonly name = 'EmulatorControlError';
}

export async function sendEmulatorControl(
  url: string,
  action: EmulatorControlAction,
  options: { timeoutMs?: number } = {},
): Promise<EmulatorControlAnswer> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const ws = new WebSocket(url, [FOXGLOVE_SUBPROTOCOL]);
  const client = new FoxgloveClient({ ws: ws as never });
  try {
    return await new Promise<EmulatorControlAnswer>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new EmulatorControlError(`${url}: no answer to ${action.action} within ${timeoutMs} ms`)),
        timeoutMs,
      );
      const fail = (err: Error) => {
        clearTimeout(timer);
        reject(err);
      };
      ws.once('error', (err) => fail(new EmulatorControlError(`${url}: ${err.message}`)));
      client.on('error', () => {}); // the socket's own error (above) carries the reason
      client.on('serverInfo', (info) => {
        if (!declaresEmulatorControl(info.metadata ?? {})) {
          fail(
            new EmulatorControlError(
              `${url} does not declare ${EMULATOR_CONTROL_TOPIC} (serverInfo metadata emulator_control): not a robot emulator, or started with --no-control`,
            ),
          );
          return;
        }
        const channel = client.advertise({
          topic: EMULATOR_CONTROL_TOPIC,
          encoding: 'json',
          schemaName: EMULATOR_CONTROL_SCHEMA_NAME,
        });
        client.sendMessage(channel, Buffer.from(JSON.stringify(action), 'utf8'));
      });
      client.on('status', (s) => {
        if (s.id !== EMULATOR_CONTROL_STATUS_ID.ok && s.id !== EMULATOR_CONTROL_STATUS_ID.refused) return;
        clearTimeout(timer);
        resolve({ ok: s.id === EMULATOR_CONTROL_STATUS_ID.ok, message: s.message });
      });
    });
  } finally {
    ws.terminate();
  }
}
