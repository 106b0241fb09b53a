// A small G1 plant on the robot end of the DDS wire, on a thread of its own (so the test's own
// event loop — console client, runner bridge — cannot stall the robot's lowstate): publishes
// LowState at 500 Hz, first-order joints following LowCmd's PD target, an upright IMU, a wireless
// remote. Reports every LowCmd received ({atMs: Unix ms, damped, modeMachine, modePr}).
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { G1_NUM_JOINTS } from '../../src/domain/robot/g1Joints';
import { emptyLowState } from '../../src/domain/robotLink/unitreeHgWire';
import { G1DdsRobot } from '../../src/services/dds/g1DdsEndpoints';
import { raiseThreadPriority } from '../../src/services/os/threadPriority';

const port = parentPort!;
// A robot's motor board keeps its own time: the plant's thread runs at the runner's priority.
raiseThreadPriority(-10);
const { domainId } = workerData as { domainId: number };
const robot = new G1DdsRobot({ interfaceName: 'lo', domainId });
const q = new Float64Array(G1_NUM_JOINTS);
const target = new Float64Array(G1_NUM_JOINTS);
const kp = new Float64Array(G1_NUM_JOINTS);
const msg = emptyLowState();
msg.modeMachine = 5;
msg.imu.quaternion.set([1, 0, 0, 0]);
let publishing = true;
let nanQ0 = false;
let remoteKeys = 0;
let tick = 0;
let maxPublishGapMs = 0;
let lastPublishMs = 0;
const now = (): number => performance.timeOrigin + performance.now();
let batch: { atMs: number; damped: boolean; modeMachine: number; modePr: number }[] = [];

robot.onMessage(({ message: c }) => {
  let damped = true;
  for (let j = 0; j < G1_NUM_JOINTS; j++) {
    target[j] = c.q[j];
    kp[j] = c.kp[j];
    if (c.kp[j] !== 0 || c.kd[j] !== 3) damped = false;
  }
  batch.push({ atMs: now(), damped, modeMachine: c.modeMachine, modePr: c.modePr });
});

const timer = setInterval(() => {
  const t = now();
  if (lastPublishMs && publishing) maxPublishGapMs = Math.max(maxPublishGapMs, t - lastPublishMs);
  lastPublishMs = t;
  for (let j = 0; j < G1_NUM_JOINTS; j++) if (kp[j] > 0) q[j] += (target[j] - q[j]) * 0.2;
  if (!publishing) return;
  tick = (tick + 1) >>> 0;
  msg.tick = tick;
  msg.q.set(q);
  if (nanQ0) msg.q[0] = Number.NaN;
  msg.wirelessRemote[2] = remoteKeys & 0xff;
  msg.wirelessRemote[3] = remoteKeys >> 8;
  robot.send(msg);
}, 2);

const report = setInterval(() => {
  port.postMessage({ type: 'report', cmds: batch, q: Array.from(q), maxPublishGapMs });
  batch = [];
}, 10);

port.on(
  'message',
  (m: { type: string; publishing?: boolean; nanQ0?: boolean; remoteKeys?: number; tick?: number; quat?: number[] }) => {
    const at = now();
    if (m.type === 'set') {
      if (m.publishing !== undefined) publishing = m.publishing;
      if (m.nanQ0 !== undefined) nanQ0 = m.nanQ0;
      if (m.remoteKeys !== undefined) remoteKeys = m.remoteKeys;
      if (m.tick !== undefined) tick = m.tick;
      if (m.quat !== undefined) msg.imu.quaternion.set(m.quat);
      port.postMessage({ type: 'set_at', atMs: at });
    } else if (m.type === 'close') {
      clearInterval(timer);
      clearInterval(report);
      robot.close();
      port.close();
    }
  },
);
port.postMessage({ type: 'ready' });
