import type { ReactNode } from 'react';

/** A form's or a panel's refusal, read out by screen readers (role alert); the e2e tests find it by `testId`. */
export function FieldError({ testId, children }: { testId: string; children: ReactNode }) {
  return (
    <div className="field-error" role="alert" data-testid={testId}>
      {children}
    </div>
  );
}
