import { randomBytes } from 'node:crypto';
import { makeRunId } from '../../domain/trace/ids';
import { calibrationCheckProblem, calibrationDifference, poseDifference } from '../../domain/trial';
import { bindingName } from '../../domain/wbc/bindingName';
import { bindingKey } from '../../domain/wbc/wbcBinding';
import { captureStill } from './pairRequests';
import type { RequestHandlers } from './trialSessionContext';

// A real trial up to the robot's run, step by step as the reducer asks: the operator's reset (the
// measured pose decides, not the note) and the gate's reset, the fresh start-pose capture, the
// trial opened on the gate with its calibration, the operator's confirmation, the interlock armed,
// the robot leased and the gate asked for `prepare`.

export const TRIAL_START_REQUESTS: RequestHandlers<
  'prompt_reset' | 'reset_gate' | 'check_start_pose' | 'open_trial' | 'ask_confirmation' | 'arm_interlock' | 'prepare'
> = {
  prompt_reset: async (ctx, fx) => {
    const note = await ctx.req.operator.confirmReset({
      trialIndex: fx.trialIndex,
      afterOutcome: fx.afterOutcome,
      tripped: fx.tripped,
    });
    // The robot's pose once the operator says it is back (the next lowstate), against the
    // pair's start pose: the reducer refuses the reset when it is not there.
    const pairCal = ctx.held.pairCal;
    const pose = note !== null && pairCal && (await ctx.pose.next()) ? poseDifference(ctx.pose.latest, pairCal) : null;
    return { type: 'reset_answered', note, pose };
  },

  reset_gate: (ctx, fx) => {
    const gate = ctx.held.need('gate');
    const r = gate.feed({ type: 'operator_reset', atMs: gate.now(), note: fx.note });
    if (r?.reset && !r.reset.accepted) return { type: 'gate_reset', accepted: false, reasons: r.reset.reasons };
    return { type: 'gate_reset', accepted: true };
  },

  check_start_pose: async (ctx) => {
    const { held, pose } = ctx;
    const unwatch = pose.watch();
    const fresh = await captureStill(ctx).finally(unwatch);
    const runId = makeRunId('real_robot', Date.now(), randomBytes(4).toString('hex'));
    if (!fresh.ok) {
      // A robot that cannot be held still is usually not at the start pose at all (lying,
      // sagging): say so, with the joints out, before the stillness figures.
      const pairCal = held.need('pairCal');
      const offPose = pose.latest.have ? calibrationCheckProblem(poseDifference(pose.latest, pairCal)) : null;
      return {
        type: 'start_pose_checked',
        runId,
        ok: false,
        message: offPose ?? `did not hold still at the start pose: ${fresh.message}`,
        reasons: [...(offPose ? [offPose] : []), ...fresh.reasons.map((r) => r.message)],
      };
    }
    const capturedAtMs = held.need('gate').now();
    held.fresh = { runId, record: fresh.record, capturedAtMs };
    return {
      type: 'start_pose_checked',
      runId,
      ok: true,
      difference: calibrationDifference(fresh.record, held.need('pairCal')),
    };
  },

  open_trial: (ctx, fx) => {
    const { held, pair, qual } = ctx;
    const gate = held.need('gate');
    const fresh = held.takeFresh();
    const freshCalibrationId = ctx.req.store.putCalibration(fresh.record).id;
    gate.feed({
      type: 'episode_start',
      atMs: gate.now(),
      runId: fx.runId,
      pairId: pair.pairId,
      contractId: qual.identity.contractId,
      bindingKey: bindingKey(held.need('binding')),
    });
    gate.feed({
      type: 'calibration',
      atMs: gate.now(),
      runId: fx.runId,
      capturedAtMs: fresh.capturedAtMs,
      calibrationId: freshCalibrationId,
    });
    return { type: 'trial_opened', runId: fx.runId, freshCalibrationId };
  },

  ask_confirmation: async (ctx, fx) => {
    const { held } = ctx;
    const confirmed = await ctx.req.operator.confirmTrial({
      pairId: ctx.pair.pairId,
      runId: fx.runId,
      trialIndex: fx.trialIndex,
      trials: fx.trials,
      clipName: held.need('clip').name,
      binding: bindingKey(held.need('binding')),
      bindingName: bindingName(held.need('binding')),
      calibrationCheck: fx.calibrationCheck,
    });
    return { type: 'confirmation', runId: fx.runId, confirmed };
  },

  arm_interlock: async (ctx, fx) => {
    const { interlock } = ctx.req;
    if (!interlock.link.isArmedAndFresh()) {
      const armed = await interlock.link.arm();
      if (!armed.ok)
        return { type: 'interlock_armed', runId: fx.runId, ok: false, reason: armed.reason, detail: armed.detail };
      // Let the box's ARMED status reach the gate (statuses answer heartbeats every 20 ms).
      const gate = ctx.held.need('gate');
      for (let i = 0; i < 20 && gate.gate.preview(gate.now()).some((r) => r.condition === 'interlock'); i++)
        await new Promise((r) => setTimeout(r, 10));
    }
    return { type: 'interlock_armed', runId: fx.runId, ok: true };
  },

  prepare: async (ctx, fx) => {
    const { link } = ctx.req;
    const lease = await link.backend.acquire(fx.runId);
    // Read on each trial, with the robot leased (so present): what this connection advertised
    // (motion capture or not, the state rate) — a reconnect may have changed it.
    ctx.held.lease = { runId: fx.runId, lease, caps: link.backend.capabilities };
    const d = ctx.held.need('gate').requestMotion('prepare');
    return { type: 'prepare_decided', runId: fx.runId, allowed: d.allowed, reasons: d.allowed ? [] : d.reasons };
  },
};
