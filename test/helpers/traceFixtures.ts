// Fixtures for the trace-store tests: deterministic 500 Hz robot-like StateFrames, a binding,
// parent-trace inputs with real hashes, a metrics result, temp folders, and a child-process
// runner for crash and failure injection (test/helpers/traceChild.ts).

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EpisodeEnd } from '../../src/domain/backend/backend';
import { createStateFrame, type StateFrame } from '../../src/domain/robot/stateFrame';
import { sha256HexOfString } from '../../src/domain/hash/sha256';
import { availableReading, MB_METRICS_1, unavailableReading, type EpisodeMetrics } from '../../src/domain/metrics';
import { G1_NUM_JOINTS } from '../../src/domain/robot/g1Joints';
import { makeBuiltinBinding, rootAssistFromStiffness } from '../../src/domain/sim/builtinBinding';
import { DEFAULT_ADAPTER_VERSION } from '../../src/domain/trace/parentTrace';
import type { ParentTraceInputs } from '../../src/services/trace';
import { fileURLToPath } from 'node:url';
import { nodeArgsFor } from './tsChild';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const TRACE_CHILD = path.join(REPO_ROOT, 'test/helpers/traceChild.ts');

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `mb-trace-${prefix}-`));
}

export const fixtureBinding = (assist = 3000) => makeBuiltinBinding({ rootAssist: rootAssistFromStiffness(assist) });

export function fixtureInputs(overrides: Partial<ParentTraceInputs> = {}): ParentTraceInputs {
  return {
    binding: fixtureBinding(),
    clipId: 'clip-0123456789abcdef',
    referenceSha256: sha256HexOfString('reference of clip-0123456789abcdef'),
    modelSha256: sha256HexOfString('our g1 model'),
    adapterVersion: DEFAULT_ADAPTER_VERSION,
    bodySet: ['pelvis', 'left_hip_pitch_link', 'left_ankle_roll_link', 'right_ankle_roll_link'],
    contractId: MB_METRICS_1.id,
    calibrationId: null,
    ...overrides,
  };
}

/** Frame i of a deterministic 500 Hz stream (all fields vary, so mistakes show). */
export function syntheticFrame(i: number, rateHz = 500, f: StateFrame = createStateFrame(true)): StateFrame {
  const t = i / rateHz;
  f.timeS = t;
  f.tick = i;
  f.referenceFrame = null;
  f.rootPosM!.set([0.01 * Math.sin(t), 0.02 * t, 0.78 + 0.01 * Math.cos(3 * t)]);
  const h = 0.05 * Math.sin(0.5 * t);
  f.rootQuatWxyz!.set([Math.cos(h / 2), 0, 0, Math.sin(h / 2)]);
  for (let j = 0; j < G1_NUM_JOINTS; j++) {
    const w = 1 + 0.1 * j;
    f.jointPosRad[j] = 0.3 * Math.sin(w * t + j);
    f.jointVelRadS[j] = 0.3 * w * Math.cos(w * t + j);
    f.jointTauNm[j] = 5 * Math.sin(2 * w * t - j);
  }
  f.imu.quatWxyz.set(f.rootQuatWxyz!);
  f.imu.gyroRadS.set([0.01 * Math.sin(t), 0.02 * Math.cos(t), 0.025 * Math.cos(0.5 * t)]);
  f.imu.accelMS2.set([0.1 * Math.sin(t), 0.1 * Math.cos(t), 9.81]);
  return f;
}

/** Frames [from, to) as fresh objects. */
export function syntheticFrames(from: number, to: number, rateHz = 500): StateFrame[] {
  const out: StateFrame[] = [];
  for (let i = from; i < to; i++) out.push(syntheticFrame(i, rateHz));
  return out;
}

export function fixtureMetrics(contract = MB_METRICS_1.id, failed = false): EpisodeMetrics {
  return {
    contract,
    K: 101,
    failure: availableReading(
      failed
        ? { frame: 42, timeS: 0.84, condition: 'root_height' as const, body: 'pelvis', error: 0.31, threshold: 0.25 }
        : null,
    ),
    progressSoft: availableReading(failed ? 0.42 : 1),
    progressStop: availableReading(failed ? { frame: 42, cause: 'hard_failure' as const } : null),
    mpjpeLMm: availableReading(48.25),
    jointPosRmseRad: availableReading(0.061),
    jointVelRmseRadS: availableReading(0.52),
    jointAccRmsRadS2: availableReading(11.5),
    jointAccP95RadS2: availableReading(23.75),
    jointJerkRmsRadS3: unavailableReading('the robot stream has no jerk here (test fixture)'),
    jointJerkP95RadS3: availableReading(1234.5),
  };
}

export function fixtureEnd(
  runId: string,
  frames: number,
  outcome: EpisodeEnd['outcome'] = 'completed',
  rateHz = 500,
): EpisodeEnd {
  return {
    runId,
    outcome,
    reason: outcome === 'completed' ? 'the clip ran to its end' : `test ${outcome}`,
    frames,
    simSeconds: frames > 0 ? (frames - 1) / rateHz : 0,
    wallSeconds: 0.5,
  };
}

export interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  lines: string[];
}

export interface ChildOptions {
  /** Run under a file-size limit (RLIMIT_FSIZE, via the shell's `ulimit -f` in 512-byte blocks): writes past it fail with EFBIG — for root too. */
  fileSizeLimitBlocks?: number;
  /**
   * Root only: the child drops to this uid/gid (setgroups/setgid/setuid) after its modules are
   * loaded and before it touches the campaign, so permission bits bind it — wherever the repo is
   * checked out (it need not be readable by that user).
   */
  uid?: number;
  gid?: number;
  /** Kill with SIGKILL once a stdout line satisfies this. */
  killWhen?: (line: string, lines: string[]) => boolean;
  /** …this many ms after that line (default 0: at once). */
  killDelayMs?: number;
  timeoutMs?: number;
}

/** Runs test/helpers/traceChild.ts with `args` in a child process (tsx). */
export function runTraceChild(args: string[], o: ChildOptions = {}): Promise<ChildResult> {
  const node = [process.execPath, ...nodeArgsFor(TRACE_CHILD), ...args];
  const [cmd, argv] =
    o.fileSizeLimitBlocks !== undefined
      ? (['/bin/sh', ['-c', `ulimit -f ${o.fileSizeLimitBlocks} && exec "$@"`, 'sh', ...node]] as const)
      : ([node[0], node.slice(1)] as const);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        ...(o.uid !== undefined
          ? { MB_TRACE_CHILD_UID: String(o.uid), MB_TRACE_CHILD_GID: String(o.gid ?? o.uid) }
          : {}),
      },
    });
    let stdout = '';
    let stderr = '';
    const lines: string[] = [];
    let buf = '';
    let killing = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(`trace child timed out after ${o.timeoutMs ?? 30_000} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`),
      );
    }, o.timeoutMs ?? 30_000);
    child.stdout.on('data', (d: Buffer) => {
      const s = d.toString();
      stdout += s;
      buf += s;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        // Every line was printed before the process died, so every line is a fact.
        lines.push(line);
        if (!killing && o.killWhen?.(line, lines)) {
          killing = true;
          const kill = () => child.kill('SIGKILL');
          if (o.killDelayMs) setTimeout(kill, o.killDelayMs);
          else kill();
        }
      }
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, lines });
    });
  });
}

/** The JSON documents a child printed (one per line, lines that are not JSON skipped). */
export function childDocs(r: ChildResult): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const l of r.lines) {
    try {
      out.push(JSON.parse(l) as Record<string, unknown>);
    } catch {
      /* not a document */
    }
  }
  return out;
}
