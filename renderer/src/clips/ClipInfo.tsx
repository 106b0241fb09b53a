import type { ClipFormat } from '../../../src/domain/motion/motionClip';
import { useClipStore } from '../playback/clipStore';

const FPS_SOURCE_TEXT = { file: 'from file', user: 'stated', inferred: 'inferred' } as const;
const FORMAT_TEXT: Record<ClipFormat, string> = {
  'lafan1-csv': 'LAFAN1-G1 CSV',
  'mjlab-npz': 'mjlab NPZ',
  'motionbench-json': 'MotionBench JSON',
  'holomotion-npz': 'HoloMotion NPZ',
  'protomotions-motion': 'ProtoMotions .motion',
  'humanoidverse-pkl': 'HumanoidVerse .pkl',
  'sonic-csv-folder': 'SONIC reference folder',
  'policy-baked': 'reference baked into a policy',
};

/** Facts about the loaded clip. */
export function ClipInfo() {
  const loaded = useClipStore((s) => s.loaded);
  if (!loaded) {
    return (
      <section className="panel">
        <p className="muted">No clip loaded. Open a LAFAN1-G1 CSV, an mjlab NPZ or a MotionBench JSON clip.</p>
      </section>
    );
  }
  const { clip, durationS, warningCount } = loaded;
  const p = clip.provenance;
  return (
    <section className="panel" data-testid="clip-info">
      <dl className="facts">
        <dt>Name</dt>
        <dd className="strong" data-testid="clip-name" title={p.file}>
          {clip.name}
        </dd>
        <dt>Format</dt>
        <dd>{FORMAT_TEXT[p.format] ?? p.format}</dd>
        <dt>FPS</dt>
        <dd>
          {clip.fps} <span className="muted">({FPS_SOURCE_TEXT[p.fpsSource] ?? p.fpsSource})</span>
        </dd>
        <dt>Frames</dt>
        <dd>{clip.frameCount}</dd>
        <dt>Duration</dt>
        <dd>{durationS.toFixed(2)} s</dd>
        {clip.capabilityGroup && (
          <>
            <dt>Group</dt>
            <dd>{clip.capabilityGroup}</dd>
          </>
        )}
        <dt>SHA-256</dt>
        <dd className="mono muted" title={p.fileSha256 || 'no file hash: the motion came with a policy (Policy panel)'}>
          {p.fileSha256 ? `${p.fileSha256.slice(0, 16)}…` : '—'}
        </dd>
      </dl>
      <Warnings warnings={clip.warnings} count={warningCount} />
    </section>
  );
}

function Warnings({ warnings, count }: { warnings: { code: string; message: string }[]; count: number }) {
  if (count === 0) return <div className="ok-line">No warnings</div>;
  return (
    <details className="warnings" data-testid="clip-warnings">
      <summary>
        {count} warning{count === 1 ? '' : 's'}
        {count > warnings.length ? ` (first ${warnings.length} listed)` : ''}
      </summary>
      <ul>
        {warnings.map((w, i) => (
          <li key={i}>{w.message}</li>
        ))}
      </ul>
    </details>
  );
}
