import type { LightView } from './lightViews';

/** One safety light: its colour, label and detail as lightViews.ts computed them. */
export function Light({ name, view, testId }: { name: string; view: LightView; testId: string }) {
  return (
    <span
      className={`light light-${view.colour}`}
      title={`${name}: ${view.detail}`}
      data-testid={testId}
      data-colour={view.colour}
      data-label={view.label}
    >
      <span className="light-dot" />
      <span className="light-name">{name}</span>
      <b className="light-label">{view.label}</b>
    </span>
  );
}
