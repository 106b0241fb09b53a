/**
 * The campaign folder of a panel that reads one (Qualification board, Gap review): a path on the
 * machine running the services, opened with Enter or the panel's Open button.
 */
export function CampaignDirField({
  value,
  onChange,
  onEnter,
  testId,
}: {
  value: string;
  onChange: (dir: string) => void;
  onEnter: () => void;
  testId: string;
}) {
  return (
    <label className="qual-dir">
      <span>Campaign</span>
      <input
        type="text"
        placeholder="/path/to/campaign"
        value={value}
        onChange={(e) => onChange(e.target.value)}
        onKeyDown={(e) => e.key === 'Enter' && onEnter()}
        data-testid={testId}
      />
    </label>
  );
}
