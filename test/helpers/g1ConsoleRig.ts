import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { ConnectionInfo, TrialJobStatus } from '../../src/api/contract';
import type { G1DdsEmulatorStats } from '../../src/services/robotEmulator/g1DdsEmulator';
import {
  startInterlockEmulatorProcess,
  type InterlockBoxProcess,
} from '../../src/services/interlock/interlockEmulatorProcess';
import { sendEmulatorControl } from '../../src/services/robotEmulator/emulatorControlClient';
import { startDdsG1Emulator, type DdsG1EmulatorProcess } from './ddsG1EmulatorProcess';
import { HostApiClient } from './hostApiClient';
import { makePtyPair, type TestPtyPair } from './ptyPair';
import { MOTIONBENCH_BIN } from './runCli';
import { REPO_ROOT } from './sharedData';
import { startTogether } from './startTogether';
import { nodeArgsFor } from './tsChild';

// The console driving a G1 over DDS with real parts, each in its own process, for the tests and the
// soak that go through the console's API exactly as the Trial runner panel does:
//   - `emulate-robot --dds --interface lo --gantry` (the G1 on the wire, its control channel);
//   - the interlock box emulated on the far end of a real socat pty (its own process);
//   - the console's services: `motionbench host` (the real command, with the built renderer) or
//     test/helpers/hostChild.ts (startHostServer with a stub renderer; env passed through);
//   - one API client (HostApiClient) that opens the box, adds "G1 over DDS" (the services start
//     the runner), and runs matched pairs with trial.start / trial.status / trial.confirm,
//     answering the prompts as the operator does: a reset is the robot stood up again at its
//     start pose and lifted onto its gantry (the emulator's human_reset + gantry lift).

export interface G1ConsoleRigOptions {
  domainId: number;
  /** 'command': `motionbench host` (needs the built renderer); 'child': hostChild.ts. */
  host: 'command' | 'child';
  /** Extra environment of the services' process. */
  hostEnv?: Record<string, string>;
  log?: (line: string) => void;
}

/** One real trial as the console's API reported it. */
export interface RigTrial {
  runId: string;
  trialIndex: number | null;
  outcome: string;
  reason: string;
  frames: number;
  /** The trip that ended it (trial.progress detail `trip`), if any. */
  trip: { cause: string; reason: string } | null;
}

export interface RigPairResult {
  status: TrialJobStatus;
  trials: RigTrial[];
  simOutcome: string | null;
}

/** What the soak does once a trial is running (the runner tracking): inject a fault, or nothing. */
export type OnTracking = (trial: { runId: string; trialIndex: number | null; runningSinceMs: number }) => Promise<void>;

const STATUS_POLL_MS = 50;
/** Without a `tracking` report, a trial is taken as tracking this long after it began running. */
const RAMP_FALLBACK_MS = 3500;
/**
 * After the robot is stood up and lifted, its damped limbs sag to where they hang: this long, so
 * that the pair calibration and each reset's check see the same resting pose (0.05 rad per joint).
 */
const SETTLE_MS = 6000;

export class G1ConsoleRig {
  readonly log: (line: string) => void;
  emu!: DdsG1EmulatorProcess;
  pty!: TestPtyPair;
  box!: InterlockBoxProcess;
  host!: ChildProcess;
  api!: HostApiClient;
  server!: { port: number; token: string; url: string };
  entryId = '';
  hostErr = '';
  private readonly trips = new Map<string, { cause: string; reason: string }>();
  /** The runner's motor mode as the services last pushed it (safety.status robots[].runner.mode). */
  runnerMode: string | null = null;

  private constructor(private readonly o: G1ConsoleRigOptions) {
    this.log = o.log ?? (() => {});
  }

  static async start(o: G1ConsoleRigOptions): Promise<G1ConsoleRig> {
    const rig = new G1ConsoleRig(o);
    try {
      await rig.startParts();
    } catch (err) {
      await rig.close();
      throw err;
    }
    return rig;
  }

  private async startParts(): Promise<void> {
    // The emulated G1, the box on its pty and the services do not need each other to start: started
    // together (each is a Node process with its own start-up), every one of them kept for close()
    // even when another fails.
    await startTogether(
      startDdsG1Emulator(this.o.domainId, ['--gantry']).then((emu) => {
        this.emu = emu;
      }),
      makePtyPair().then(async (pty) => {
        this.pty = pty;
        this.box = await startInterlockEmulatorProcess({ path: pty.devicePath });
      }),
      this.startHost().then((server) => {
        this.server = server;
      }),
    );
    this.api = await HostApiClient.connect(this.server);
    this.api.onPush((m) => {
      if (m.type === 'safety.status') {
        const robots = m.robots as { connectionId: string; runner?: { mode: string } | null }[];
        const r = robots.find((x) => x.connectionId === this.entryId);
        const mode = r?.runner?.mode ?? null;
        if (r && mode !== this.runnerMode) {
          this.log(`runner ${mode}`);
          this.runnerMode = mode;
        }
        return;
      }
      if (m.type !== 'trial.progress') return;
      const d = m.detail as { type: string; cause?: string; reason?: string; runId?: string | null } | null;
      if (d?.type === 'trip' && d.runId) this.trips.set(d.runId, { cause: d.cause!, reason: d.reason! });
    });
    await this.api.call('interlock.open', { path: this.pty.consolePath });
    const entry = await this.api.call<ConnectionInfo>('connections.addG1Dds', {
      interface: 'lo',
      domain: this.o.domainId,
      afterClip: 'gantry',
    });
    this.entryId = entry.id;
    try {
      await this.waitPresent();
    } catch (err) {
      // A runner that did not listen within the services' start limit on a loaded machine: the
      // operator connects the entry again.
      this.log(`the first runner did not come up: ${(err as Error).message.slice(0, 300)}`);
      await this.restartRunner();
    }
  }

  private async startHost(): Promise<{ port: number; token: string; url: string }> {
    const env = { ...process.env, ...this.o.hostEnv };
    const args =
      this.o.host === 'command'
        ? [MOTIONBENCH_BIN, 'host', '--port', '0']
        : nodeArgsFor(path.join(REPO_ROOT, 'test/helpers/hostChild.ts'));
    this.host = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe'], env });
    this.host.stderr!.on('data', (d: Buffer) => {
      this.hostErr = (this.hostErr + d.toString()).slice(-50_000);
    });
    const lines = createInterface({ input: this.host.stdout! });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the host did not start: ${this.hostErr.slice(-2000)}`)), 60_000);
      this.host.once('exit', (c) => reject(new Error(`the host exited ${c}: ${this.hostErr.slice(-2000)}`)));
      lines.on('line', (line) => {
        if (this.o.host === 'child') {
          const { port, token } = JSON.parse(line) as { port: number; token: string };
          clearTimeout(timer);
          resolve({ port, token, url: `http://127.0.0.1:${port}/?token=${token}` });
          return;
        }
        const m = /MotionBench Console: (http:\/\/\S+)/.exec(line);
        if (!m) return;
        const u = new URL(m[1]);
        clearTimeout(timer);
        resolve({ port: Number(u.port), token: u.searchParams.get('token')!, url: m[1] });
      });
    });
  }

  async connection(): Promise<ConnectionInfo | undefined> {
    return (await this.api.call<ConnectionInfo[]>('connections.list')).find((e) => e.id === this.entryId);
  }

  async waitPresent(timeoutMs = 60_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const e = await this.connection();
      if (e?.presence === 'present') return;
      if (Date.now() > end)
        throw new Error(
          `the G1 over DDS entry is not present (${JSON.stringify(e?.problems ?? null)}); services: ${this.hostErr.slice(-2000)}`,
        );
      await sleep(200);
    }
  }

  /** The services' process (`motionbench host`). */
  hostPid(): number | null {
    return this.host?.pid ?? null;
  }

  /** The services' runner process (a child of the services' process whose command is g1-runner). */
  runnerPid(): number | null {
    for (const d of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(d)) continue;
      try {
        const stat = fs.readFileSync(`/proc/${d}/stat`, 'latin1');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        if (ppid !== this.host.pid) continue;
        const cmd = fs.readFileSync(`/proc/${d}/cmdline`, 'latin1');
        if (cmd.includes('g1-runner')) return Number(d);
      } catch {
        // gone meanwhile
      }
    }
    return null;
  }

  /**
   * The operator's reconnect after the runner died: disconnect the entry, connect it (the services
   * start a new runner); a runner that did not start in time (a loaded machine) is tried again, at
   * most `attempts` times. Returns how many attempts it took.
   */
  async restartRunner(attempts = 3): Promise<number> {
    for (let i = 1; ; i++) {
      await this.api.call('connections.disconnect', { id: this.entryId });
      try {
        await this.api.call('connections.connect', { id: this.entryId });
        await this.waitPresent();
        return i;
      } catch (err) {
        if (i >= attempts) throw err;
        this.log(`runner restart attempt ${i} failed: ${(err as Error).message.slice(0, 300)}`);
      }
    }
  }

  async emulatorStatus(): Promise<G1DdsEmulatorStats> {
    const r = await sendEmulatorControl(this.emu.controlUrl, { action: 'status' } as never);
    return JSON.parse(r.message) as G1DdsEmulatorStats;
  }

  async emulatorControl(action: Record<string, unknown>): Promise<string> {
    const r = await sendEmulatorControl(this.emu.controlUrl, action as never);
    if (!r.ok) throw new Error(`emulator control ${JSON.stringify(action)}: ${r.message}`);
    return r.message;
  }

  /** The operator puts the robot back: standing at its start pose, lifted onto its gantry, settled. */
  async placeOnGantry(): Promise<void> {
    await this.emulatorControl({ action: 'release_estop' });
    await this.emulatorControl({ action: 'human_reset' });
    await this.emulatorControl({ action: 'gantry', lift: true });
    await sleep(SETTLE_MS);
  }

  /** The box's e-stop released and the interlock armed again (after an interlock e-stop). */
  async rearm(): Promise<void> {
    this.box.releaseEstop();
    await sleep(300);
    let armed = await this.api.call<{ ok: boolean; reason: string | null }>('interlock.arm');
    for (let i = 0; i < 50 && !armed.ok; i++) {
      await sleep(50);
      armed = await this.api.call('interlock.arm');
    }
    if (!armed.ok) this.log(`interlock.arm refused: ${JSON.stringify(armed)}`);
  }

  /**
   * Runs the matched pair's real trials (trial.start; the simulation branch first when it has not
   * run) until the job ends, answering prompts as the operator; `onTracking` is called once per
   * real trial once the runner reports `tracking` (after its prepare ramp). Resolves with the job's end.
   */
  async runPair(
    campaignDir: string,
    pairId: string,
    trials: number,
    onTracking: OnTracking,
    timeoutMs = 600_000,
  ): Promise<RigPairResult> {
    const started = await this.api.call<{ status: TrialJobStatus }>('trial.start', {
      campaignDir,
      pairId,
      connectionId: this.entryId,
      trials,
    });
    const jobId = started.status.jobId;
    const answered = new Set<string>();
    const tracked = new Set<string>();
    const injections: Promise<void>[] = [];
    const end = Date.now() + timeoutMs;
    let status = started.status;
    let lastPhase = '';
    for (;;) {
      status = await this.api.call<TrialJobStatus>('trial.status', { jobId });
      const phase = `${status.phase} ${status.trialIndex ?? ''}`;
      if (phase !== lastPhase) {
        this.log(`job ${jobId}: ${phase} (${status.phaseMessage.slice(0, 160)})`);
        lastPhase = phase;
      }
      if (status.state !== 'running') break;
      if (Date.now() > end) {
        await this.api.call('trial.stop', { jobId, reason: 'soak: the job took too long' });
        throw new Error(`trial job ${jobId} did not end within ${timeoutMs} ms (phase ${status.phase})`);
      }
      const p = status.prompt;
      if (p && !answered.has(p.promptId)) {
        answered.add(p.promptId);
        if (p.kind === 'confirm_reset' && status.episodes.some((e) => e.domain === 'real_robot' && !e.resumed)) {
          // After a real trial the runner holds the clip's last targets (after-clip: gantry); the
          // operator damps before touching the robot: trial.stop (stop + damp), which ends this
          // job; the pair is started again for its next trial.
          await this.api.call('trial.stop', { jobId, reason: 'the operator damps the robot before putting it back' });
          continue;
        }
        if (p.kind === 'confirm_reset') {
          await this.placeOnGantry();
          await this.api.call('trial.confirm', {
            jobId,
            promptId: p.promptId,
            ok: true,
            note: 'robot stood up at its start pose and lifted onto its gantry (emulator human_reset + gantry)',
          });
        } else {
          await this.api.call('trial.confirm', { jobId, promptId: p.promptId, ok: true });
        }
      }
      const liveRunId = status.liveRunId;
      if (status.phase === 'running' && liveRunId && !tracked.has(liveRunId)) {
        tracked.add(liveRunId);
        injections.push(
          this.untilTracking().then((seen) => {
            if (!seen)
              this.log(
                `trial ${liveRunId}: the runner's tracking was not seen in safety.status; the fault is timed from ramp end`,
              );
            return onTracking({ runId: liveRunId, trialIndex: status.trialIndex, runningSinceMs: Date.now() });
          }),
        );
      }
      await sleep(STATUS_POLL_MS);
    }
    await Promise.all(injections);
    const trialsOut: RigTrial[] = status.episodes
      .filter((e) => e.domain === 'real_robot' && !e.resumed)
      .map((e) => ({
        runId: e.runId,
        trialIndex: e.trialIndex,
        outcome: e.outcome,
        reason: e.reason,
        frames: e.frames,
        trip: this.trips.get(e.runId) ?? null,
      }));
    const sim = status.episodes.find((e) => e.domain === 'simulation' && !e.resumed);
    return { status, trials: trialsOut, simOutcome: sim?.outcome ?? null };
  }

  /**
   * Resolves once the services report the runner `tracking` (safety.status), true; false after
   * RAMP_FALLBACK_MS without it (the runner's prepare ramp is at most 3 s).
   */
  private async untilTracking(): Promise<boolean> {
    const end = Date.now() + RAMP_FALLBACK_MS;
    while (Date.now() < end) {
      if (this.runnerMode === 'tracking') return true;
      await sleep(10);
    }
    return false;
  }

  /**
   * SIGKILL to every process of the rig, synchronously (a second Ctrl-C: nothing may be awaited).
   * Each runs in a session of its own and would otherwise outlive the program that started it.
   */
  killNow(): void {
    const pids = [this.runnerPid(), this.host?.pid, this.emu?.child.pid, this.box?.pid, this.pty?.pid];
    for (const pid of pids)
      if (typeof pid === 'number' && pid > 0)
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
  }

  async close(): Promise<void> {
    this.api?.close();
    if (this.host && this.host.exitCode === null && this.host.signalCode === null) {
      this.host.kill('SIGCONT');
      const gone = new Promise((r) => this.host.once('exit', r));
      this.host.kill('SIGTERM');
      const k = setTimeout(() => this.host.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(k);
    }
    await this.box?.close();
    await this.pty?.dispose();
    await this.emu?.stop();
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Wall-clock ms since the epoch, sub-ms (comparable with the emulated G1's gain transition times). */
export function epochMs(): number {
  return performance.timeOrigin + performance.now();
}
