import { policyMotionShown, showPolicyMotion } from './policyActions';
import { needText } from './policyFormat';
import { usePolicyStore, type PolicyInfo } from './policyStore';
import { useClipStore } from '../clips/clipStore';

// What the Policy panel shows of an open policy: family and adapter, binding, observation,
// control rate and physics, action mode, joint order, what it needs from the backend, the motion
// baked into it (shown as the clip on display), its notes, files and ONNX interface.

const JOINT_ORDER_TEXT: Record<string, string> = {
  canonical: 'canonical G1 order',
  isaaclab: 'Isaac Lab order',
  custom: 'its own order',
};

/** mm, readable at any scale (the residuals of baked motions are far below a millimetre). */
function mm(m: number): string {
  const v = m * 1000;
  if (v >= 0.1) return `${v.toFixed(1)} mm`;
  if (v >= 0.001) return `${v.toFixed(3)} mm`;
  return '< 0.001 mm';
}

const shape = (s: (number | string)[]) => `[${s.join(', ')}]`;

/** What an operator needs to judge the open policy before running it. */
export function PolicyFacts({ info }: { info: PolicyInfo }) {
  const clipId = useClipStore((s) => s.loaded?.clip.id ?? null);
  const motionName = usePolicyStore((s) => s.bakedClip?.clip.name ?? null);
  const m = info.motion;
  const obs = info.observation.map((t) => `${t.term} ${t.size}${t.history > 1 ? `×${t.history}` : ''}`).join(' + ');
  return (
    <>
      <dl className="facts policy-facts" data-testid="policy-info" data-policy-id={info.policyId}>
        <dt>Family</dt>
        <dd title={info.path}>
          <span className="strong" data-testid="policy-family">
            {info.family}
          </span>{' '}
          <span className="muted nw" data-testid="policy-adapter">
            · {info.adapter}
          </span>
        </dd>
        <dt>Binding</dt>
        <dd
          className="mono"
          title={`${info.bindingId}@${info.bindingVersion} (${info.policyId})`}
          data-testid="policy-binding"
        >
          {info.bindingId}
          <span className="muted small policy-version">@{info.bindingVersion}</span>
        </dd>
        {info.preset !== null && (
          <>
            <dt>Preset</dt>
            <dd
              className="mono"
              data-testid="policy-preset"
              title="the file carries no interface of its own: it was read under this declared preset, checked against its graph and joint names"
            >
              {info.preset}
            </dd>
          </>
        )}
        <dt>Observation</dt>
        <dd
          title="values per control step = the terms in the order the policy reads them (size × history)"
          data-testid="policy-observation"
          data-size={info.observationSize}
        >
          <b className="mono">{info.observationSize}</b> <span className="muted">=</span>{' '}
          <span className="small">{obs}</span>
        </dd>
        <dt>Control</dt>
        <dd data-testid="policy-control" title="control rate = 1 / (physics timestep × decimation)">
          <span className="mono">{info.controlRateHz} Hz</span>{' '}
          <span className="muted nw">
            ({Number((info.timestepS * 1000).toFixed(3))} ms × {info.decimation})
          </span>
        </dd>
        <dt>Physics</dt>
        <dd
          className="mono"
          data-testid="policy-physics"
          title="the policy's physics profile, applied to the simulator for each episode"
        >
          {info.physicsId}
        </dd>
        <dt>Action</dt>
        <dd data-testid="policy-action">
          <span className="nw">{info.actionMode}</span> <span className="muted nw">· anchor {info.anchorBody}</span>
        </dd>
        <dt>Joints</dt>
        <dd
          data-testid="policy-joint-order"
          data-value={info.jointOrder}
          title="the console maps the policy's joints to the G1 by name, whatever order the file uses"
        >
          <span className="nw">{JOINT_ORDER_TEXT[info.jointOrder] ?? info.jointOrder},</span>{' '}
          <span className="nw">remapped by name</span>
        </dd>
        <dt>Needs</dt>
        <dd
          className={info.needs.length > 0 ? 'warn-text' : 'ok-text'}
          data-testid="policy-needs"
          data-value={info.needs.join(',')}
        >
          {info.needs.length === 0
            ? 'none beyond joints and IMU'
            : info.needs.map((n) => <div key={n}>needs {needText(n)}</div>)}
        </dd>
        <dt>Motion</dt>
        <dd
          data-testid="policy-motion"
          data-frames={m?.frames ?? ''}
          data-fps={m?.fps ?? ''}
          data-clip-id={m?.clipId ?? ''}
        >
          <BakedMotion info={info} />
        </dd>
      </dl>
      {m && !policyMotionShown(info, clipId) && (
        <div className="row policy-motion-off small">
          <span className="warn-text">another clip is on display: this policy runs only its own motion</span>
          <button
            type="button"
            className="small"
            onClick={showPolicyMotion}
            data-testid="policy-show-motion"
            title={`show ${motionName ?? m.clipId} as the clip on display`}
          >
            Show its motion
          </button>
        </div>
      )}
      <PolicyFiles info={info} />
    </>
  );
}

/** The motion baked into the policy (or named beside it), or that it runs the clip you open. */
function BakedMotion({ info }: { info: PolicyInfo }) {
  const m = info.motion;
  return (
    <>
      {m ? (
        <>
          <span className="nw">
            <span className="mono">{m.frames}</span> frames at <span className="mono">{m.fps}</span> fps
          </span>{' '}
          <span className="muted nw">({((m.frames - 1) / m.fps).toFixed(2)} s)</span>{' '}
          <span
            className="muted nw"
            title={
              m.fkResidualMaxM === null
                ? 'the motion was not checked against forward kinematics'
                : `largest body-position residual of the baked motion against forward kinematics of the G1 model: ${m.fkResidualMaxM} m`
            }
          >
            · FK residual {m.fkResidualMaxM === null ? '—' : mm(m.fkResidualMaxM)}
          </span>
        </>
      ) : info.configuredMotion ? (
        <span data-testid="policy-configured-motion" title={info.configuredMotion.source}>
          its own motion, named beside it: <span className="mono">{baseName(info.configuredMotion.file)}</span> at{' '}
          {info.configuredMotion.fps} fps <span className="muted">(Check runs it; open it to simulate)</span>
        </span>
      ) : (
        <span className="muted">no baked motion: runs the clip you open</span>
      )}
    </>
  );
}

/** The policy's notes, files and ONNX inputs and outputs, folded. */
function PolicyFiles({ info }: { info: PolicyInfo }) {
  return (
    <>
      {info.notes.length > 0 && (
        <details className="policy-details" data-testid="policy-notes">
          <summary>
            {info.notes.length} note{info.notes.length === 1 ? '' : 's'}
          </summary>
          <ul>
            {info.notes.map((n, i) => (
              <li key={i}>{n}</li>
            ))}
          </ul>
        </details>
      )}
      <details className="policy-details" data-testid="policy-interface">
        <summary>
          files and ONNX interface ({info.files.length} file{info.files.length === 1 ? '' : 's'})
        </summary>
        <ul>
          {info.files.map((f) => (
            <li key={f} className="mono">
              {f}
            </li>
          ))}
          {info.inputs.map((t) => (
            <li key={`in-${t.name}`} className="mono">
              in {t.name} {shape(t.shape)} {t.dtype}
            </li>
          ))}
          {info.outputs.map((t) => (
            <li key={`out-${t.name}`} className="mono">
              out {t.name} {shape(t.shape)} {t.dtype}
            </li>
          ))}
        </ul>
      </details>
    </>
  );
}

/** The last path component of a services-side file path (POSIX or Windows separators). */
function baseName(file: string): string {
  return file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1);
}
