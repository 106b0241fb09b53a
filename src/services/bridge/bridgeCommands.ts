import type { Backend } from '../../domain/backend/backend';
import {
  G1_BRIDGE_SCHEMA_NAMES,
  G1_BRIDGE_TOPICS,
  type AckCode,
  type CommandAck,
  type CommandName,
} from '../../domain/bridge/g1BridgeContract';
import { canStart } from '../../domain/bridge/g1BridgeServerState';
import type { BridgeCommand, CommandValidation } from '../../domain/bridge/g1BridgeValidate';
import { STATUS_ID, type BridgeClients, type ClientState, type CommandCounts } from './bridgeClients';
import type { BridgeRuns } from './bridgeRuns';
import type { CommandDecoder } from './commandDecoder';
import type { RobotBridgeHooks } from './robotBridgeHooks';

// The g1-bridge/1 server's commands on /console/command, from the controlling client only: each
// is decoded (a large one off this thread: commandDecoder.ts), answered (an ack in wbc_status,
// and a Foxglove status naming its seq when refused) and mapped onto the backend lease:
// reset → lease.reset, prepare + start → lease.run, stop → lease.stop.
//
// reset, prepare and start run one after another in arrival order. stop, damp and hold bypass that
// queue and act at once: damp damps the robot before any episode is stopped, hold holds it after;
// each cancels the queued commands that arrived before it.

type SafetyCommand = Extract<BridgeCommand, { command: 'stop' | 'damp' | 'hold' }>;
type QueuedCommand = Exclude<BridgeCommand, { command: 'stop' | 'damp' | 'hold' }>;

const isSafetyCommand = (cmd: BridgeCommand): cmd is SafetyCommand =>
  cmd.command === 'stop' || cmd.command === 'damp' || cmd.command === 'hold';

/** Who sent a command and what held when it arrived (decoding may finish later). */
interface Arrival {
  client: ClientState;
  isController: boolean;
  stopEpoch: number;
}

export interface BridgeCommandsOptions {
  backend: Backend;
  robot: RobotBridgeHooks | null;
  clients: BridgeClients;
  runs: BridgeRuns;
  counts: CommandCounts;
  /** Decodes each command (the large ones off this thread). */
  decoder: CommandDecoder;
  /** Publishes the status with `ack`. */
  ack: (ack: CommandAck) => void;
  log: (line: string) => void;
}

export class BridgeCommands {
  /** Serialises reset/prepare/start; stop/damp/hold bypass it. */
  private chain: Promise<void> = Promise.resolve();
  /** Hands commands decoded off this thread on in arrival order. */
  private decoded: Promise<void> = Promise.resolve();
  /** Commands whose decoding is under way (or waits behind one that is). */
  private decoding = 0;
  /** Bumped by every stop/damp/hold: queued commands from before it are cancelled. */
  private stopEpoch = 0;

  constructor(private readonly o: BridgeCommandsOptions) {}

  /** A message on a command channel (or any channel that is not a declared client channel). */
  onMessage(client: ClientState, channelId: number, topic: string, data: ArrayBufferView): void {
    const { clients, counts } = this.o;
    if (topic !== G1_BRIDGE_TOPICS.command || client.commandChannel !== channelId) {
      counts.refused++;
      clients.status(
        client,
        'error',
        `message on ${topic} ignored: only ${G1_BRIDGE_TOPICS.command} (${G1_BRIDGE_SCHEMA_NAMES.command}, JSON) is accepted`,
      );
      return;
    }
    const arrival: Arrival = {
      client,
      isController: clients.controller === client || (clients.controller === null && clients.claimControl(client)),
      stopEpoch: this.stopEpoch,
    };
    const decoded = this.o.decoder.decode(data);
    // Commands act in arrival order, except that stop, damp and hold act the moment they are
    // decoded, also ahead of a larger command still being decoded (which they cancel).
    if (!(decoded instanceof Promise) && (this.decoding === 0 || (decoded.ok && isSafetyCommand(decoded.value)))) {
      this.onDecoded(arrival, decoded);
      return;
    }
    this.decoding++;
    this.decoded = this.decoded
      .then(() => decoded)
      .then((d) => {
        this.decoding--;
        this.onDecoded(arrival, d);
      });
  }

  private onDecoded(arrival: Arrival, decoded: CommandValidation): void {
    const { clients, counts } = this.o;
    const { client, isController } = arrival;
    if (!decoded.ok) {
      if (decoded.code === 'malformed' || decoded.code === 'oversized') counts.malformed++;
      else counts.refused++;
      this.o.log(`serve: ${client.name}: command refused (${decoded.code}): ${decoded.reason}`);
      clients.status(
        client,
        'error',
        `${decoded.command ?? 'command'} refused (${decoded.code}): ${decoded.reason}`,
        STATUS_ID.refused(decoded.seq),
      );
      if (isController)
        this.o.ack({
          seq: decoded.seq,
          command: decoded.command,
          ok: false,
          code: decoded.code,
          message: decoded.reason,
        });
      return;
    }
    const cmd = decoded.value;
    if (!isController) {
      counts.refused++;
      clients.status(
        client,
        'error',
        `${cmd.command} refused (not_controller): ${this.o.backend.name} is controlled by ${clients.controller?.name ?? 'another client'}`,
        STATUS_ID.refused(cmd.seq),
      );
      return;
    }
    this.dispatch(cmd, client, arrival.stopEpoch);
  }

  /** Acts on a decoded command; a queued one is cancelled by any stop/damp/hold after `arrivalEpoch`. */
  private dispatch(cmd: BridgeCommand, client: ClientState, arrivalEpoch: number): void {
    if (isSafetyCommand(cmd)) {
      this.stopEpoch++;
      void this.execStop(cmd, client);
      return;
    }
    this.chain = this.chain.then(async () => {
      if (arrivalEpoch !== this.stopEpoch)
        return this.refuse(client, cmd, 'bad_state', `cancelled: a stop/damp/hold arrived after it`);
      try {
        await this.execQueued(cmd, client);
      } catch (err) {
        this.refuse(client, cmd, 'backend_error', (err as Error)?.message ?? String(err));
      }
    });
  }

  private accept(cmd: BridgeCommand, message: string): void {
    this.o.counts.accepted++;
    this.o.ack({ seq: cmd.seq, command: cmd.command, ok: true, code: 'ok', message });
  }

  private refuse(
    client: ClientState,
    cmd: { seq: number | null; command: CommandName },
    code: AckCode,
    message: string,
  ): void {
    this.o.counts.refused++;
    this.o.log(`serve: ${client.name}: ${cmd.command} refused (${code}): ${message}`);
    this.o.clients.status(client, 'error', `${cmd.command} refused (${code}): ${message}`, STATUS_ID.refused(cmd.seq));
    this.o.ack({ seq: cmd.seq, command: cmd.command, ok: false, code, message });
  }

  private async execQueued(cmd: QueuedCommand, client: ClientState): Promise<void> {
    const runs = this.o.runs;
    if (this.o.clients.controller !== client)
      return this.refuse(client, cmd, 'not_controller', 'control was lost before the command ran');
    if (runs.episode)
      return this.refuse(client, cmd, 'bad_state', `an episode is running (${runs.episode.runId}); stop it first`);
    switch (cmd.command) {
      case 'reset':
        return this.execReset(cmd, client);
      case 'prepare':
        return this.execPrepare(cmd, client);
      case 'start':
        return this.execStart(cmd, client);
    }
  }

  private async execReset(cmd: Extract<BridgeCommand, { command: 'reset' }>, client: ClientState): Promise<void> {
    const { backend, runs } = this.o;
    if (!backend.capabilities.exactReset)
      return this.refuse(client, cmd, 'unsupported', `${backend.name} cannot be reset to an exact state`);
    const lease = await runs.ensureLease(cmd.runId);
    try {
      await lease.reset(cmd.initial);
    } catch (err) {
      return this.refuse(client, cmd, 'backend_error', `reset failed: ${(err as Error)?.message ?? String(err)}`);
    }
    runs.forgetLastEpisode();
    runs.apply({ type: 'reset', prepared: runs.prepared !== null }, 'reset', false);
    return this.accept(cmd, `reset done (run ${lease.runId})`);
  }

  private async execPrepare(cmd: Extract<BridgeCommand, { command: 'prepare' }>, client: ClientState): Promise<void> {
    const { backend, runs, robot } = this.o;
    const kinds = backend.capabilities.bindingKinds;
    if (!kinds.includes(cmd.binding.kind)) {
      return this.refuse(
        client,
        cmd,
        'unsupported',
        `binding kind ${cmd.binding.kind} is not supported here (supported: ${kinds.join(', ')})`,
      );
    }
    const lease = await runs.ensureLease(cmd.runId);
    if (robot) {
      try {
        await robot.prepare(lease.runId, cmd.clip, cmd.binding);
      } catch (err) {
        return this.refuse(client, cmd, 'backend_error', `prepare failed: ${(err as Error)?.message ?? String(err)}`);
      }
    }
    runs.setPrepared({ clip: cmd.clip, binding: cmd.binding, seed: cmd.seed });
    runs.apply({ type: 'prepared' }, `prepared ${cmd.clip.name}`, false);
    return this.accept(
      cmd,
      `prepared clip ${cmd.clip.id} (${cmd.clip.frameCount} frames at ${cmd.clip.fps} fps) with ${cmd.binding.id}@${cmd.binding.version}, run ${lease.runId}`,
    );
  }

  private async execStart(cmd: Extract<BridgeCommand, { command: 'start' }>, client: ClientState): Promise<void> {
    const runs = this.o.runs;
    const { lease, prepared } = runs;
    if (!canStart(runs.state, prepared !== null, lease !== null) || !prepared || !lease) {
      return this.refuse(
        client,
        cmd,
        'bad_state',
        `start needs a prepared clip (state is ${runs.state}); send prepare first`,
      );
    }
    if (cmd.runId !== null && cmd.runId !== lease.runId) {
      return this.refuse(
        client,
        cmd,
        'bad_state',
        `run_id ${cmd.runId} does not match the prepared episode ${lease.runId}`,
      );
    }
    this.o.counts.accepted++;
    // The tracking status (with the ack) goes out before the backend can produce a frame.
    runs.startEpisode(lease, prepared, {
      seq: cmd.seq,
      command: 'start',
      ok: true,
      code: 'ok',
      message: `started run ${lease.runId}`,
    });
  }

  private async execStop(cmd: SafetyCommand, client: ClientState): Promise<void> {
    const { robot, runs } = this.o;
    const outcome = cmd.command === 'stop' ? cmd.outcome : 'aborted_by_operator';
    if (robot && cmd.command === 'damp') robot.damp(cmd.reason);
    if (runs.episode) {
      const runId = runs.episode.runId;
      const ok = await runs.stopEpisode(cmd.command, outcome, cmd.reason);
      if (robot && cmd.command === 'hold') robot.hold(cmd.reason);
      if (!ok.ok) return this.refuse(client, cmd, 'backend_error', `stop failed: ${ok.error}`);
      return this.accept(cmd, `${cmd.command}: stopping run ${runId} (${outcome})`);
    }
    if (robot && cmd.command === 'hold') robot.hold(cmd.reason);
    // Nothing running: drop any prepared episode and report the requested mode.
    const released = runs.releaseLease();
    if (released) await released;
    runs.dropPrepared();
    runs.apply({ type: 'stopped_idle', command: cmd.command, robot: runs.robotFacts }, cmd.reason, false);
    return this.accept(cmd, `${cmd.command}: nothing was running`);
  }
}
