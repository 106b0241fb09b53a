import type { ReactNode } from 'react';

/**
 * A thin progress bar (a run through its clip, a qualification through its clip-seconds):
 * `fraction` 0..1 of the width; `children` are drawn over the bar (e.g. a failure mark).
 */
export function ProgressBar({
  fraction,
  title,
  barTestId,
  children,
}: {
  fraction: number;
  title?: string;
  barTestId?: string;
  children?: ReactNode;
}) {
  return (
    <div className="sim-progress" title={title}>
      <div className="sim-progress-bar" style={{ width: `${fraction * 100}%` }} data-testid={barTestId} />
      {children}
    </div>
  );
}
