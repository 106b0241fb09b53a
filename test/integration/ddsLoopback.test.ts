import { spawn, spawnSync, execFileSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  decodeLowState,
  encodeLowCmd,
  encodeLowState,
  LOW_CMD_CRC_OFFSET,
  LOW_CMD_TYPE_NAME,
  lowCmdCrcValid,
  lowStateCrcValid,
} from '../../src/domain/robotLink/unitreeHgWire';
import {
  cycloneConfigXml,
  DDS_ADDON_PATH,
  DDS_KIND,
  DdsParticipant,
  loadDdsAddon,
  type DdsSample,
} from '../../src/services/dds/cycloneDdsLink';
import { G1DdsController, G1DdsRobot } from '../../src/services/dds/g1DdsEndpoints';
import { REPO_ROOT } from '../helpers/sharedData';
import { sampleLowCmd, sampleLowState } from '../helpers/unitreeHgSamples';
import { claimDdsDomains } from '../helpers/ddsDomain';

// Real Eclipse Cyclone DDS 0.10 (libddsc) over loopback: two participants of ours, and a C peer
// built in the test from the idlc-generated types of native/dds/unitree_hg.idl, in its own process.
// The domain id is per test process so parallel runs do not see each other.
const DOMAIN = claimDdsDomains();
const XML = cycloneConfigXml('lo');

let dir = '';
let peerExe = '';
const open: DdsParticipant[] = [];
const children: ChildProcessWithoutNullStreams[] = [];

function participant(): DdsParticipant {
  const p = DdsParticipant.open(DOMAIN, XML);
  open.push(p);
  return p;
}

async function waitFor(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Unitree's published type identifiers (unitree_sdk2 include/unitree/idl/hg/*.hpp type_info blobs). */
const UNITREE_TYPE_IDS = {
  lowCmdMinimal: 'f16569fc15f0d47aa8600b9e91fbbc',
  lowCmdComplete: 'f242b0283aa7e1bb592ec898a0dbed',
  lowStateMinimal: 'f12f38296b52aa0230b92d378b1e39',
  lowStateComplete: 'f22be9706c9587e8d8afd8bfc6de7b',
};

beforeAll(() => {
  if (!existsSync(DDS_ADDON_PATH)) {
    const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts/build-dds.mjs')], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`npm run build:dds failed: ${r.stderr.trim().split('\n').pop()}`);
  }
  dir = mkdtempSync(path.join(os.tmpdir(), 'dds-peer-'));
  execFileSync('idlc', ['-o', dir, path.join(REPO_ROOT, 'native/dds/unitree_hg.idl')]);
  peerExe = path.join(dir, 'peer');
  execFileSync('gcc', [
    '-O1',
    `-I${dir}`,
    '-o',
    peerExe,
    path.join(REPO_ROOT, 'test/fixtures/dds/unitreeHgPeer.c'),
    path.join(dir, 'unitree_hg.c'),
    '-lddsc',
  ]);
}, 120_000);

// Each test's participants are closed after it (the first, which created the domain, last),
// so one test's endpoints never match the next one's.
afterEach(() => {
  for (const p of open.splice(0).reverse()) p.close();
});

afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function startPeer(...args: string[]): { child: ChildProcessWithoutNullStreams; lines: string[] } {
  const child = spawn(peerExe, [String(DOMAIN), XML, ...args]);
  children.push(child);
  const lines: string[] = [];
  createInterface({ input: child.stdout }).on('line', (l) => lines.push(l));
  return { child, lines };
}

describe('G1 DDS link over real Cyclone DDS (loopback)', () => {
  it('generates the DDS types with the names and type identifiers unitree_sdk2 publishes', () => {
    const addon = loadDdsAddon();
    const cmd = addon.typeInfo(DDS_KIND.lowCmd);
    const state = addon.typeInfo(DDS_KIND.lowState);
    expect(cmd.typeName).toBe('unitree_hg::msg::dds_::LowCmd_');
    expect(state.typeName).toBe('unitree_hg::msg::dds_::LowState_');
    expect([cmd.size, state.size]).toEqual([1004, 2092]);
    const cmdHex = cmd.typeInformation.toString('hex');
    const stateHex = state.typeInformation.toString('hex');
    expect(cmdHex).toContain(UNITREE_TYPE_IDS.lowCmdMinimal);
    expect(cmdHex).toContain(UNITREE_TYPE_IDS.lowCmdComplete);
    expect(stateHex).toContain(UNITREE_TYPE_IDS.lowStateMinimal);
    expect(stateHex).toContain(UNITREE_TYPE_IDS.lowStateComplete);
    // Negative control: the two types' identifiers differ.
    expect(cmdHex).not.toContain(UNITREE_TYPE_IDS.lowStateMinimal);
  });

  it('LowCmd_ and LowState_ written with their CRC arrive byte-identical between two participants', async () => {
    const a = participant();
    const b = participant();
    const cmdIn: DdsSample[] = [];
    const stateIn: DdsSample[] = [];
    const cmdWriter = a.writer(DDS_KIND.lowCmd);
    const stateWriter = b.writer(DDS_KIND.lowState);
    b.reader(DDS_KIND.lowCmd, (s) => cmdIn.push(s));
    a.reader(DDS_KIND.lowState, (s) => stateIn.push(s));
    await waitFor(() => cmdWriter.matchedReaders() >= 1 && stateWriter.matchedReaders() >= 1, 10_000, 'matching');
    const cmdBytes = encodeLowCmd(sampleLowCmd());
    const stateBytes = encodeLowState(sampleLowState());
    const t0 = process.hrtime.bigint();
    cmdWriter.write(cmdBytes);
    stateWriter.write(stateBytes);
    await waitFor(() => cmdIn.length >= 1 && stateIn.length >= 1, 5_000, 'both samples');
    expect(Buffer.compare(cmdIn[0].bytes, cmdBytes)).toBe(0);
    expect(Buffer.compare(stateIn[0].bytes, stateBytes)).toBe(0);
    expect(lowCmdCrcValid(cmdIn[0].bytes)).toBe(true);
    expect(lowStateCrcValid(stateIn[0].bytes)).toBe(true);
    expect(cmdIn[0].receiptNs).toBeGreaterThanOrEqual(t0);
    // Negative control: a wrong length is refused before DDS sees it.
    expect(() => cmdWriter.write(stateBytes)).toThrow(/LowCmd_ sample must be 1004 bytes, got 2092/);
  });

  it('a wrong type name (without type information) or a wrong structure never matches', async () => {
    const a = participant();
    const b = participant();
    const c = participant();
    const good: DdsSample[] = [];
    const renamed: DdsSample[] = [];
    const otherStructure: DdsSample[] = [];
    const renamedWithTypeInfo: DdsSample[] = [];
    const w = a.writer(DDS_KIND.lowCmd);
    const rGood = b.reader(DDS_KIND.lowCmd, (s) => good.push(s));
    const rRenamed = b.reader(DDS_KIND.lowCmd, (s) => renamed.push(s), {
      typeName: 'unitree_hg::msg::dds_::LowCmdX_',
      withTypeInformation: false,
    });
    const rOther = c.reader(DDS_KIND.lowState, (s) => otherStructure.push(s), {
      topic: 'rt/lowcmd',
      typeName: LOW_CMD_TYPE_NAME,
    });
    // Cyclone 0.10 matches endpoints that both carry XTypes type information by assignability,
    // not by name: a renamed but identical type does match (docs/DDS_LINK.md).
    const rRenamedTi = b.reader(DDS_KIND.lowCmd, (s) => renamedWithTypeInfo.push(s), {
      typeName: 'unitree_hg::msg::dds_::LowCmdY_',
    });
    await waitFor(() => rGood.stats().matched >= 1, 10_000, 'the good reader');
    const bytes = encodeLowCmd(sampleLowCmd());
    for (let i = 0; i < 25; i++) {
      w.write(bytes);
      await new Promise((r) => setTimeout(r, 20));
    }
    await waitFor(() => good.length >= 10, 5_000, 'samples at the good reader');
    expect(renamed).toHaveLength(0);
    expect(otherStructure).toHaveLength(0);
    expect(rRenamed.stats().matched).toBe(0);
    expect(rOther.stats().matched).toBe(0);
    expect(rRenamedTi.stats().matched).toBe(1);
    expect(renamedWithTypeInfo.length).toBeGreaterThan(0);
  });

  it('a C program built from the IDL reads our LowCmd with a valid CRC, and we read its LowState', async () => {
    const a = participant();
    const states: DdsSample[] = [];
    const w = a.writer(DDS_KIND.lowCmd);
    const r = a.reader(DDS_KIND.lowState, (s) => states.push(s));
    const { child, lines } = startPeer('4242');
    const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
    await waitFor(() => lines.length >= 1, 10_000, 'the peer to start');
    const cmd = sampleLowCmd();
    const bytes = encodeLowCmd(cmd);
    while (lines.length < 2) {
      w.write(bytes);
      await new Promise((res) => setTimeout(res, 20));
      if (child.exitCode !== null) break;
    }
    const got = JSON.parse(lines[1]) as {
      crc: number;
      crcOk: boolean;
      modePr: number;
      modeMachine: number;
      reserve: number[];
      motors: number[][];
    };
    expect(got.crcOk).toBe(true);
    expect(got.crc).toBe(new DataView(bytes.buffer).getUint32(LOW_CMD_CRC_OFFSET, true));
    expect([got.modePr, got.modeMachine]).toEqual([cmd.modePr, cmd.modeMachine]);
    expect(got.reserve).toEqual(Array.from(cmd.reserve));
    for (let i = 0; i < 35; i++)
      expect(got.motors[i].map(Math.fround)).toEqual([
        cmd.mode[i],
        cmd.q[i],
        cmd.dq[i],
        cmd.tau[i],
        cmd.kp[i],
        cmd.kd[i],
        cmd.motorReserve[i],
      ]);

    // Its LowState: CRC valid, fields as it wrote them. Then our event loop is blocked for
    // 300 ms: samples keep being taken and stamped on Cyclone's thread meanwhile.
    await waitFor(() => states.length >= 5, 5_000, 'LowState from the peer');
    const first = decodeLowState(states[0].bytes);
    expect(lowStateCrcValid(states[0].bytes)).toBe(true);
    expect(first.tick).toBeGreaterThanOrEqual(4242);
    expect(first.modeMachine).toBe(5);
    expect(first.wirelessRemote[2]).toBe(0x30);
    expect(first.q[7]).toBe(cmd.q[7]);
    const blockStart = process.hrtime.bigint();
    while (process.hrtime.bigint() - blockStart < 300_000_000n) {
      /* a stalled event loop */
    }
    const blockEnd = process.hrtime.bigint();
    const before = states.length;
    await new Promise((res) => setTimeout(res, 50));
    const stampedDuringBlock = states.slice(before).filter((s) => s.receiptNs > blockStart && s.receiptNs < blockEnd);
    console.log(
      `[dds] event loop blocked 300 ms: ${stampedDuringBlock.length} LowState samples taken and stamped by Cyclone's thread meanwhile, dropped ${r.stats().dropped}`,
    );
    expect(stampedDuringBlock.length).toBeGreaterThanOrEqual(5);
    expect(r.stats().dropped).toBe(0);
    expect(await exited).toBe(0);
  });

  it('round trip to a C peer in another process, and a LowCmd with a wrong CRC counted by the peer', async () => {
    const a = participant();
    const n = 1000;
    const wrong = 5;
    const sentAt = new Map<number, bigint>();
    const rtts: number[] = [];
    let next: (() => void) | undefined;
    const w = a.writer(DDS_KIND.lowCmd);
    a.reader(DDS_KIND.lowState, (s) => {
      const tick = decodeLowState(s.bytes).tick;
      const t = sentAt.get(tick);
      if (t !== undefined) {
        rtts.push(Number(s.receiptNs - t) / 1e3);
        sentAt.delete(tick);
        next?.();
      }
    });
    const { child, lines } = startPeer('echo', String(n + wrong));
    const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
    await waitFor(() => lines.length >= 1 && w.matchedReaders() >= 1, 10_000, 'the echo peer');
    await new Promise((res) => setTimeout(res, 200));
    const cmd = sampleLowCmd();
    const bytes = new Uint8Array(1004);
    const t0 = performance.now();
    for (let seq = 1; seq <= n; seq++) {
      cmd.reserve[0] = seq;
      encodeLowCmd(cmd, bytes);
      const answered = new Promise<void>((res) => (next = res));
      sentAt.set(seq, process.hrtime.bigint());
      w.write(bytes);
      await Promise.race([answered, new Promise((res) => setTimeout(res, 100))]);
    }
    const elapsedMs = performance.now() - t0;
    for (let k = 0; k < wrong; k++) {
      cmd.reserve[0] = 900_000 + k;
      encodeLowCmd(cmd, bytes);
      bytes[LOW_CMD_CRC_OFFSET] ^= 0xff;
      w.write(bytes);
      await new Promise((res) => setTimeout(res, 20));
    }
    expect(await exited).toBe(0);
    const summary = JSON.parse(lines[lines.length - 1]) as { echoed: number; crcErrors: number };
    rtts.sort((x, y) => x - y);
    console.log(
      `[dds] cross-process round trip LowCmd->LowState over loopback: ${rtts.length}/${n} answered in ${elapsedMs.toFixed(0)} ms; ` +
        `p50 ${percentile(rtts, 50).toFixed(0)} us, p99 ${percentile(rtts, 99).toFixed(0)} us, max ${rtts[rtts.length - 1].toFixed(0)} us`,
    );
    expect(rtts.length).toBeGreaterThanOrEqual(n * 0.98);
    expect(summary.crcErrors).toBe(wrong);
    expect(percentile(rtts, 50)).toBeLessThan(5_000);
  });

  it('C1: controller and robot ends write the CRC on every message and drop and count a wrong one', async () => {
    const controller = new G1DdsController({ interfaceName: 'lo', domainId: DOMAIN });
    const robot = new G1DdsRobot({ interfaceName: 'lo', domainId: DOMAIN });
    const rogue = DdsParticipant.open(DOMAIN, XML);
    try {
      const states: number[] = [];
      const kps: number[] = [];
      controller.onMessage(({ message }) => states.push(message.tick));
      robot.onMessage(({ message }) => kps.push(message.kp[3]));
      const rogueState = rogue.writer(DDS_KIND.lowState);
      const rogueCmd = rogue.writer(DDS_KIND.lowCmd);
      await waitFor(
        () =>
          controller.matchedPeers() >= 1 &&
          robot.matchedPeers() >= 1 &&
          rogueState.matchedReaders() >= 1 &&
          rogueCmd.matchedReaders() >= 1,
        10_000,
        'matching',
      );
      const state = sampleLowState();
      const cmd = sampleLowCmd();
      const badState = encodeLowState(state);
      badState[12] ^= 0x01; // tick changed after the CRC was computed
      const badCmd = encodeLowCmd(cmd);
      badCmd[4 + 3 * 28 + 16] ^= 0x01; // motor 3's kp
      for (let i = 0; i < 5; i++) {
        state.tick = 1000 + i;
        robot.send(state);
        rogueState.write(badState);
        controller.send(cmd);
        rogueCmd.write(badCmd);
        await new Promise((res) => setTimeout(res, 10));
      }
      await waitFor(
        () =>
          controller.counters().received + controller.counters().crcErrors >= 10 &&
          robot.counters().received + robot.counters().crcErrors >= 10,
        5_000,
        'all samples',
      );
      expect(states).toEqual([1000, 1001, 1002, 1003, 1004]);
      expect(kps).toEqual(Array(5).fill(cmd.kp[3]));
      expect(controller.counters()).toEqual({ received: 5, crcErrors: 5, dropped: 0, sent: 5 });
      expect(robot.counters()).toEqual({ received: 5, crcErrors: 5, dropped: 0, sent: 5 });
    } finally {
      rogue.close();
      robot.close();
      controller.close();
    }
  });

  it('W1: the addon works inside a worker thread, and the process exits cleanly after the worker ends', () => {
    const r = spawnSync(
      process.execPath,
      [path.join(REPO_ROOT, 'test/fixtures/dds/ddsInWorker.mjs'), DDS_ADDON_PATH, String(DOMAIN + 1), XML],
      { encoding: 'utf8', timeout: 30_000 },
    );
    expect(r.signal).toBeNull();
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('received 5');
    expect(r.stdout).toContain('worker exit 0');
  });

  it('throughput: LowCmd samples per second between two participants, drops counted', async () => {
    const a = participant();
    const b = participant();
    let received = 0;
    const w = a.writer(DDS_KIND.lowCmd);
    const r = b.reader(DDS_KIND.lowCmd, () => received++);
    await waitFor(() => w.matchedReaders() >= 1, 10_000, 'matching');
    const bytes = encodeLowCmd(sampleLowCmd());
    const total = 20_000;
    const t0 = performance.now();
    for (let i = 0; i < total; i += 100) {
      for (let k = 0; k < 100; k++) w.write(bytes);
      await new Promise((res) => setImmediate(res));
    }
    const writeMs = performance.now() - t0;
    await waitFor(() => received + r.stats().dropped >= r.stats().received, 2_000, 'delivery');
    await new Promise((res) => setTimeout(res, 100));
    const st = r.stats();
    console.log(
      `[dds] ${total} LowCmd writes in ${writeMs.toFixed(0)} ms (${((total / writeMs) * 1000).toFixed(0)}/s); ` +
        `delivered to JS ${received}, dropped at the full queue ${st.dropped}, taken by DDS ${st.received + st.dropped}`,
    );
    expect(received).toBe(st.received);
    expect(received).toBeGreaterThan(total * 0.5);
  });
});
