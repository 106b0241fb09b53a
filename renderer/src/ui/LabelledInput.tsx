import type { InputHTMLAttributes, ReactNode } from 'react';

type InputProps = Omit<InputHTMLAttributes<HTMLInputElement>, 'value' | 'onChange' | 'className'>;

/**
 * One form field: `<label><span>{label}</span><input …/>{after}</label>`. The input is a text box
 * unless `type` says otherwise; every other input attribute (placeholder, inputMode, title,
 * aria-invalid, min/max/step) passes through unchanged, so the DOM the e2e tests select on is the
 * one the panels wrote by hand. `labelTitle` is the tooltip of the whole field, `title` the input's.
 */
export function LabelledInput({
  label,
  value,
  onText,
  testId,
  className,
  labelTitle,
  after,
  ...input
}: InputProps & {
  label: ReactNode;
  value: string | number;
  /** The input's new text, as typed. */
  onText: (text: string) => void;
  testId: string;
  className?: string;
  labelTitle?: string;
  /** Shown after the input inside the label: a unit or a hint. */
  after?: ReactNode;
}) {
  return (
    <label className={className} title={labelTitle}>
      <span>{label}</span>
      <input type="text" {...input} value={value} onChange={(e) => onText(e.target.value)} data-testid={testId} />
      {after}
    </label>
  );
}
