import { useState } from 'react';
import type { AdmittedPairDto, TrialJobStatus } from '../../../src/api/contract';
import type { SessionBadgeTone } from '../../../src/domain/trial/sessionBadge';
import { trialNumber } from '../../../src/domain/trial/trialNumber';
import { useConnectionStore } from '../api/connectionStore';
import { useEndpointsStore } from '../connections/endpointsStore';
import { useClipStore } from '../playback/clipStore';
import { LiveTrialPlot } from '../plots/LiveTrialPlot';
import { useSafetyStore } from '../safety/safetyStore';
import { firstPressDecision, TimingWarning, useTimingHealth } from './TimingWarning';
import { FieldError } from '../ui/FieldError';
import { deg, mmAsCm } from '../ui/format';
import { ProgressBar } from '../ui/ProgressBar';
import { useThrottledStore } from '../ui/useThrottledStore';
import { armInterlock, closeInterlockBox, listPorts, openInterlockBox } from './interlockActions';
import { answerPrompt, loadQueue, startTrial, stopTrial } from './trialActions';
import { jobBadge, parseTrials, phaseLine, realProgressText } from './trialFormat';
import { patchTrialForm, trialLiveStore, useTrialStore, type TrialLiveState } from './trialStore';
import { useAnalysisStore } from '../analysis/analysisStore';
import { minimalSetOffer, minimalSetPairs } from './minimalSetQueue';
import { watchOnlyReason } from './linkControl';
import { runnerStatusView } from './runnerStatusView';

// The Trial runner (DESIGN §8): the admitted pairs of a campaign (clip, binding,
// how far the matched pair got), the interlock box (open, ARM / DISARM, refusals verbatim), one
// matched pair at a time (1 simulation branch + N real trials) with the runner's prompts answered
// here, the gate's refusal reasons verbatim, and the live readings of the running trial from the
// transient store (10 Hz on screen, never React state per frame). STOP is the top bar's button,
// Escape and Space (Space not while typing in a field); the Stop / Intervention buttons here stop this job only.
// A watch-only robot link (e.g. a ROS 2 robot through foxglove_bridge) cannot run a trial: Start is
// disabled and the link's reason is shown beside it (linkControl.ts).

function PairRow({ p, selected, trials }: { p: AdmittedPairDto; selected: boolean; trials: number }) {
  const m = p.matched;
  return (
    <li
      className={`trial-pair${selected ? ' trial-pair-on' : ''}${p.admitted ? '' : ' trial-pair-rejected'}`}
      data-testid={`trial-pair-${p.clipName}`}
      data-admitted={p.admitted ? 'true' : 'false'}
      title={
        p.admitted
          ? `admitted ${p.decidedAt}`
          : `not admitted for hardware:\n${p.reasons.map((r) => `• ${r}`).join('\n')}`
      }
    >
      <label className="check">
        <input
          type="radio"
          name="trial-pair"
          checked={selected}
          disabled={!p.admitted}
          onChange={() => useTrialStore.setState({ selectedPairId: p.pairId })}
          data-testid={`trial-pair-pick-${p.clipName}`}
        />
        <span className="mono trial-pair-clip" title={`${p.clipName} (${p.clipId})`}>
          {p.clipName}
        </span>
      </label>
      <span
        className="muted trial-pair-binding"
        title={`${p.bindingKey}: ${p.bindingLabel}`}
        data-testid={`trial-pair-binding-${p.clipName}`}
      >
        {p.bindingName}
      </span>
      <span
        className="mono trial-pair-progress"
        title={m ? `matched pair ${m.parentTraceId} · calibration ${m.calibrationId}` : 'not started'}
        data-testid={`trial-pair-progress-${p.clipName}`}
      >
        {!p.admitted
          ? 'rejected'
          : m
            ? `sim ${m.simDone ? '✓' : '·'} · real ${m.realDone > trials ? `${m.realDone} (${trials} asked)` : `${m.realDone}/${trials}`}`
            : 'new'}
      </span>
    </li>
  );
}

function Prompt({ job }: { job: TrialJobStatus }) {
  const p = job.prompt;
  const note = useTrialStore((s) => s.form.resetNote);
  const busy = useTrialStore((s) => s.busy.includes('confirm'));
  const timing = useTimingHealth();
  // The prompt whose Confirm met a BAD timing: its warning is shown until answered.
  const [timingWarnedFor, setTimingWarnedFor] = useState<string | null>(null);
  if (!p) return null;
  if (p.kind === 'confirm_trial' && p.trial) {
    const t = p.trial;
    const warned = timingWarnedFor === p.promptId;
    const confirm = () => {
      if (firstPressDecision(timing).kind === 'confirm') setTimingWarnedFor(p.promptId);
      else void answerPrompt(true);
    };
    return (
      <div
        className="trial-prompt"
        role="alertdialog"
        aria-label="Confirm the trial"
        data-testid="trial-prompt"
        data-kind={p.kind}
      >
        <div className="strong">
          Confirm real trial {trialNumber(t.trialIndex)} of {t.trials}: {t.clipName} × {t.bindingName}
        </div>
        <div className="small muted">
          start pose vs the pair calibration: max joint {deg(t.calibrationCheck.maxJointDiffRad)}, attitude{' '}
          {deg(t.calibrationCheck.attitudeDiffRad)} · the interlock is armed on confirm
        </div>
        {warned ? (
          <TimingWarning
            action="confirm this trial"
            goLabel="Confirm anyway — robot moves"
            onGo={() => {
              setTimingWarnedFor(null);
              void answerPrompt(true);
            }}
            onCancel={() => setTimingWarnedFor(null)}
            testId="trial-confirm-timing"
          />
        ) : (
          <div className="row">
            <button type="button" className="primary" disabled={busy} onClick={confirm} data-testid="trial-confirm">
              Confirm — robot moves
            </button>
            <button type="button" disabled={busy} onClick={() => void answerPrompt(false)} data-testid="trial-decline">
              Decline
            </button>
          </div>
        )}
      </div>
    );
  }
  const r = p.reset!;
  return (
    <div
      className="trial-prompt"
      role="alertdialog"
      aria-label="Confirm the reset"
      data-testid="trial-prompt"
      data-kind={p.kind}
    >
      <div className="strong">
        Put the robot back at its start pose for trial {trialNumber(r.trialIndex)}
        {r.afterOutcome ? ` (after ${r.afterOutcome.replace(/_/g, ' ')})` : ''}
        {r.tripped ? ' — the safety gate tripped' : ''}
      </div>
      <label className="trial-note">
        <span className="small muted">who / what (kept in the trace; Esc = STOP)</span>
        <input
          type="text"
          value={note}
          onChange={(e) => patchTrialForm({ resetNote: e.target.value })}
          data-testid="trial-reset-note"
        />
      </label>
      <div className="row">
        <button
          type="button"
          className="primary"
          disabled={busy || note.trim() === ''}
          onClick={() => void answerPrompt(true)}
          data-testid="trial-confirm"
        >
          Robot is reset
        </button>
        <button type="button" disabled={busy} onClick={() => void answerPrompt(false)} data-testid="trial-decline">
          End the session
        </button>
      </div>
    </div>
  );
}

function LiveReadings({ job }: { job: TrialJobStatus }) {
  const live = useThrottledStore(trialLiveStore, (s: TrialLiveState) => ({ ...s }), 10);
  const clip = useClipStore((s) => s.loaded?.clip);
  const globalRoot = useSafetyStore(
    (s) => s.robots.find((r) => r.connectionId === job.connectionId)?.globalRoot ?? false,
  );
  const duration = clip && clip.id === job.clip?.id ? (clip.frameCount - 1) / clip.fps : null;
  const running = job.liveRunId !== null && live.runId === job.liveRunId;
  const frac = duration && duration > 0 ? Math.max(0, Math.min(1, live.timeS / duration)) : 0;
  return (
    <div
      className={`trial-live${live.failed ? ' trial-live-failed' : ''}`}
      data-testid="trial-live"
      data-run-id={live.runId ?? ''}
      data-samples={live.samples}
      data-failed={live.failed ? 'true' : 'false'}
    >
      <div className="trial-readings">
        <span
          title={
            live.samples > 0 && live.mpjpeLMm === null
              ? 'MPJPE-l needs the root heading: unavailable without motion capture (never shown as 0)'
              : 'MPJPE-l of the latest frame (root-relative body error), cm'
          }
        >
          MPJPE-l{' '}
          <b className="mono" data-testid="trial-mpjpe">
            {live.samples > 0 && live.mpjpeLMm === null ? 'n/a' : mmAsCm(live.mpjpeLMm)}
          </b>
          {live.samples > 0 && live.mpjpeLMm === null ? '' : ' cm'}
        </span>
        <span title="RMS joint-angle error of the latest frame, rad">
          joint RMSE{' '}
          <b className="mono" data-testid="trial-rmse" data-value={live.jointRmseRad ?? ''}>
            {live.jointRmseRad === null ? '—' : live.jointRmseRad.toFixed(3)}
          </b>{' '}
          rad
        </span>
        {live.samples > 0 && live.mpjpeLMm === null && !live.failed ? (
          <span
            className="badge"
            data-testid="trial-failure-flag"
            title="hard-failure detection needs the root’s global position and heading: unavailable without motion capture (never shown as “no failure”)"
          >
            failure n/a
          </span>
        ) : (
          <span
            className={live.failed ? 'badge trial-fail-flag' : 'badge badge-done'}
            data-testid="trial-failure-flag"
            title={live.failure ?? 'no hard failure so far'}
          >
            {live.failed ? 'FAILED' : 'no failure'}
          </span>
        )}
      </div>
      <ProgressBar
        fraction={frac}
        title={duration ? `${live.timeS.toFixed(2)} of ${duration.toFixed(2)} s` : undefined}
        barTestId="trial-progress-bar"
      />
      <div className="small muted mono">
        {running ? 'live' : live.runId ? 'last trial' : 'no real trial yet'} · frame {live.frame} ·{' '}
        {live.timeS.toFixed(2)} s{duration ? ` / ${duration.toFixed(2)} s` : ''} · {live.samples} samples
        {live.skipped > 0 && <span className="warn-text"> · {live.skipped} skipped for display</span>}
      </div>
      {live.failure && (
        <div className="bad-text small" data-testid="trial-failure">
          {live.failure}
        </div>
      )}
      <LiveTrialPlot />
      <div className="small muted" data-testid="trial-root-note">
        {globalRoot
          ? 'Live robot root from motion capture.'
          : 'No motion capture: the live robot is drawn at the reference root (joint angles measured).'}
      </div>
    </div>
  );
}

const BADGE_TONE_CLASS: Record<SessionBadgeTone, string> = {
  live: 'badge-live',
  ok: 'ok-text',
  warn: 'warn-text',
  alarm: 'bad-text',
};

function Job({ job }: { job: TrialJobStatus }) {
  const busyStop = useTrialStore((s) => s.busy.includes('stop'));
  const running = job.state === 'running';
  const badge = jobBadge(job);
  return (
    <div className="trial-job" data-testid="trial-job" data-state={job.state} data-phase={job.phase ?? ''}>
      <div className="row small">
        <span
          className={`badge trial-state ${BADGE_TONE_CLASS[badge.tone]}`}
          data-testid="trial-state"
          data-state={job.state}
          data-tone={badge.tone}
          title="completed only when every real trial of the pair completed; otherwise how the session ended and each outcome"
        >
          {badge.text}
        </span>
        <span className="mono" data-testid="trial-real-progress">
          {realProgressText(job)}
        </span>
        <span className="muted">{job.clip?.name ?? job.pairId}</span>
        <span className="spacer" />
        <button
          type="button"
          className="small"
          disabled={!running || busyStop}
          onClick={() => void stopTrial(false)}
          data-testid="trial-stop"
        >
          Stop
        </button>
        <button
          type="button"
          className="small"
          disabled={!running || busyStop}
          title="stop for a human intervention (the trial ends as an intervention)"
          onClick={() => void stopTrial(true)}
          data-testid="trial-intervention"
        >
          Intervention
        </button>
      </div>
      <div className="small trial-phase" data-testid="trial-phase">
        {phaseLine(job)}
      </div>
      {job.refusals.length > 0 && (
        <ul className="trial-refusals" role="alert" data-testid="trial-refusals">
          {job.refusals.map((r, i) => (
            <li key={i} className="bad-text small" title={`${r.code} (${r.condition})`}>
              {r.message}
            </li>
          ))}
        </ul>
      )}
      {job.lastTrip && (
        <div className="bad-text small" data-testid="trial-trip">
          TRIP {job.lastTrip.cause}: {job.lastTrip.reason} → {job.lastTrip.outcome.replace(/_/g, ' ')}
        </div>
      )}
      <Prompt job={job} />
      <LiveReadings job={job} />
      {job.episodes.length > 0 && (
        <ul className="trial-episodes small" data-testid="trial-episodes">
          {job.episodes.map((e) => (
            <li
              key={e.runId}
              data-testid={`trial-episode-${e.domain === 'simulation' ? 'sim' : `real-${e.trialIndex}`}`}
              data-outcome={e.outcome}
              data-resumed={e.resumed ? 'true' : 'false'}
            >
              <span className="badge badge-domain">
                {e.domain === 'simulation' ? 'sim' : `real trial ${trialNumber(e.trialIndex)}`}
              </span>{' '}
              <b>{e.outcome.replace(/_/g, ' ')}</b>{' '}
              <span className="muted">
                · {e.frames} frames · {e.reason}
              </span>
              {e.resumed && (
                <span className="muted" data-testid="trial-episode-earlier">
                  {' '}
                  · earlier session
                </span>
              )}
            </li>
          ))}
        </ul>
      )}
      {job.error && <div className="field-error">{job.error}</div>}
    </div>
  );
}

function InterlockRow() {
  const path = useTrialStore((s) => s.form.interlockPath);
  const ports = useTrialStore((s) => s.ports);
  const err = useTrialStore((s) => s.interlockError);
  const busy = useTrialStore((s) => s.busy);
  const interlock = useSafetyStore((s) => s.interlock);
  const open = interlock?.open === true;
  const connected = useConnectionStore((s) => s.status === 'connected');
  return (
    <div className="trial-interlock">
      <div className="row">
        <input
          type="text"
          list="interlock-ports"
          placeholder="/dev/ttyUSB0 (interlock box)"
          value={path}
          spellCheck={false}
          onChange={(e) => patchTrialForm({ interlockPath: e.target.value })}
          aria-label="Interlock device"
          data-testid="interlock-path"
        />
        <datalist id="interlock-ports">
          {ports?.ports.map((p) => (
            <option key={p.path} value={p.path}>
              {p.manufacturer ?? ''}
            </option>
          ))}
        </datalist>
        <button
          type="button"
          className="small"
          disabled={!connected || busy.includes('ports')}
          title={ports?.note ?? 'list serial ports'}
          onClick={() => void listPorts()}
          data-testid="interlock-list"
        >
          Ports
        </button>
        {open ? (
          <button
            type="button"
            className="small"
            disabled={busy.includes('interlock')}
            onClick={() => void closeInterlockBox()}
            data-testid="interlock-close"
          >
            Close
          </button>
        ) : (
          <button
            type="button"
            className="small"
            disabled={!connected || busy.includes('interlock') || path.trim() === ''}
            onClick={() => void openInterlockBox()}
            data-testid="interlock-open"
          >
            Open
          </button>
        )}
      </div>
      <div className="row">
        <button
          type="button"
          className="small"
          disabled={!open || busy.includes('arm')}
          onClick={() => void armInterlock(true)}
          title="ARM the box (the runner also arms it when you confirm a trial)"
          data-testid="interlock-arm"
        >
          Arm
        </button>
        <button
          type="button"
          className="small"
          disabled={!open || busy.includes('arm')}
          onClick={() => void armInterlock(false)}
          data-testid="interlock-disarm"
        >
          Disarm
        </button>
        <span className="small muted mono" data-testid="interlock-state">
          {interlock
            ? `${interlock.light}${interlock.lastStatusAgeMs !== null ? ` · ${Math.round(interlock.lastStatusAgeMs)} ms` : ''}${interlock.rttMs !== null ? ` · rtt ${interlock.rttMs.toFixed(1)} ms` : ''}`
            : 'no box'}
        </span>
      </div>
      {err && <FieldError testId="interlock-error">{err}</FieldError>}
    </div>
  );
}

const TONE_CLASS = { ok: 'ok-text', warn: 'warn-text', bad: 'bad-text', muted: 'muted' } as const;

/** The robot-side runner's state (wbc_status.runner) of the selected robot; nothing for a server that is not a runner. */
function RunnerStatusRow({ connectionId }: { connectionId: string | null }) {
  const link = useSafetyStore((s) => s.robots.find((r) => r.connectionId === connectionId) ?? null);
  const figures = runnerStatusView(link);
  if (!figures) return null;
  return (
    <div className="runner-status small mono" data-testid="runner-status" aria-label="Robot-side runner">
      <span className="muted">runner</span>
      {figures.map((f) => (
        <span key={f.key} className="runner-figure" title={f.title} data-testid={`runner-${f.key}`}>
          <span className="muted">{f.label}</span> <span className={TONE_CLASS[f.tone]}>{f.value}</span>
        </span>
      ))}
    </div>
  );
}

export function TrialRunnerPanel() {
  const form = useTrialStore((s) => s.form);
  const queue = useTrialStore((s) => s.queue);
  const analysis = useAnalysisStore((s) => s.doc);
  const [onlyMinimal, setOnlyMinimal] = useState(false);
  const offer = minimalSetOffer(queue, analysis);
  const shownPairs = queue ? (offer && onlyMinimal ? minimalSetPairs(queue.pairs, offer.clips) : queue.pairs) : [];
  const selected = useTrialStore((s) => s.selectedPairId);
  const job = useTrialStore((s) => s.job);
  const error = useTrialStore((s) => s.error);
  const starting = useTrialStore((s) => s.starting);
  const busy = useTrialStore((s) => s.busy);
  const robots = useSafetyStore((s) => s.robots);
  const connected = useConnectionStore((s) => s.status === 'connected');
  const running = job?.state === 'running';
  const trials = parseTrials(form.trialsText);
  const robotId = form.connectionId || robots[0]?.connectionId || null;
  const robotName = robots.find((r) => r.connectionId === robotId)?.name ?? robotId;
  const watchOnly = useEndpointsStore((s) => watchOnlyReason(s.entries.find((e) => e.id === robotId)));
  const timing = useTimingHealth();
  const [startTimingWarned, setStartTimingWarned] = useState(false);
  const start = () => {
    if (firstPressDecision(timing).kind === 'confirm') setStartTimingWarned(true);
    else void startTrial();
  };
  return (
    <section className="panel trial-panel" data-testid="trial-panel" aria-label="Trial runner">
      <div className="panel-head">
        <h2>Trial runner</h2>
      </div>
      <div className="trial-form">
        <input
          type="text"
          placeholder="/path/to/campaign"
          value={form.campaignDir}
          spellCheck={false}
          onChange={(e) => patchTrialForm({ campaignDir: e.target.value })}
          onKeyDown={(e) => e.key === 'Enter' && void loadQueue()}
          aria-label="Campaign folder"
          data-testid="trial-dir"
        />
        <button
          type="button"
          className="small"
          disabled={!connected || busy.includes('queue') || form.campaignDir.trim() === ''}
          onClick={() => void loadQueue()}
          data-testid="trial-load"
        >
          Queue
        </button>
      </div>
      <div className="row small">
        <label className="row">
          robot
          <select
            value={form.connectionId}
            onChange={(e) => patchTrialForm({ connectionId: e.target.value })}
            data-testid="trial-robot"
          >
            <option value="">{robots[0] ? `first (${robots[0].name})` : '— add one in Connections —'}</option>
            {robots.map((r) => (
              <option key={r.connectionId} value={r.connectionId}>
                {r.name}
              </option>
            ))}
          </select>
        </label>
        <label className="row">
          trials
          <input
            type="text"
            inputMode="numeric"
            className="trial-count"
            value={form.trialsText}
            aria-invalid={!trials.ok}
            onChange={(e) => patchTrialForm({ trialsText: e.target.value })}
            data-testid="trial-count"
          />
        </label>
      </div>
      <RunnerStatusRow connectionId={robotId} />
      <InterlockRow />
      {offer && (
        <label
          className="small"
          title="the minimal hardware clip set of the Analysis panel's analysis of this campaign"
        >
          <input
            type="checkbox"
            checked={onlyMinimal}
            onChange={(e) => setOnlyMinimal(e.target.checked)}
            data-testid="trial-minimal-set"
          />{' '}
          only the minimal clip set ({offer.label})
        </label>
      )}
      {queue && (
        <ul className="trial-queue" data-testid="trial-queue">
          {shownPairs.map((p) => (
            <PairRow key={p.pairId} p={p} selected={p.pairId === selected} trials={queue.trials} />
          ))}
          {queue.pairs.length === 0 && (
            <li className="muted small">no pair of this campaign is admitted for hardware yet (Qualification board)</li>
          )}
        </ul>
      )}
      <div className="row">
        <button
          type="button"
          className="primary"
          disabled={!connected || running || starting || !selected || !trials.ok || watchOnly !== null}
          title={
            watchOnly !== null
              ? `${robotName} is a watch-only robot link: ${watchOnly}`
              : trials.ok
                ? '1 simulation branch from the calibrated start, then the real trials, each confirmed here'
                : trials.reason
          }
          onClick={start}
          data-testid="trial-start"
        >
          {starting ? 'Starting…' : 'Start matched pair'}
        </button>
      </div>
      {startTimingWarned && !running && (
        <TimingWarning
          action="start the matched pair"
          goLabel="Start anyway"
          onGo={() => {
            setStartTimingWarned(false);
            void startTrial();
          }}
          onCancel={() => setStartTimingWarned(false)}
          testId="trial-start-timing"
        />
      )}
      {watchOnly !== null && (
        <div className="small warn-text" role="note" data-testid="trial-start-blocked">
          Start is disabled: <strong>{robotName}</strong> is a watch-only robot link — {watchOnly}
        </div>
      )}
      {error && <FieldError testId="trial-error">{error}</FieldError>}
      {job && <Job job={job} />}
    </section>
  );
}
