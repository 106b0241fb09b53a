import type { PolicyInfo } from '../policies/policyStore';
import { LabelledInput } from '../ui/LabelledInput';
import { patchSimForm, type BindingChoice, type PaceChoice, type SimFormState } from './simStore';

// The fields of the Sim trial form: which simulator, which binding (the builtin tracker with or
// without root assist, or the policy open in the Policy panel), and the run's seed, speed and
// length. `problem` is the form's current refusal (simRequestFromForm), which marks the field it
// names invalid.

const PACE_TEXT: Record<PaceChoice, string> = { '1': '1× live', '2': '2×', '5': '5×', max: 'max' };

/** A simulator the form can run on. */
export interface SimulatorOption {
  id: string;
  name: string;
  presence: string;
}

export function SimulatorField({ form, options }: { form: SimFormState; options: SimulatorOption[] }) {
  return (
    <label className="sim-field">
      <span>Simulator</span>
      <select
        value={form.connectionId}
        onChange={(e) => patchSimForm({ connectionId: e.target.value })}
        data-testid="sim-connection"
        aria-label="Simulator"
      >
        {options.map((e) => (
          <option key={e.id} value={e.id}>
            {e.name}
            {e.presence !== 'present' && e.presence !== 'disconnected' ? ` (${e.presence})` : ''}
          </option>
        ))}
      </select>
    </label>
  );
}

export function BindingField({
  form,
  policy,
  formProblem,
}: {
  form: SimFormState;
  policy: PolicyInfo | null;
  formProblem: string | null;
}) {
  return (
    <label className="sim-field">
      <span>Binding</span>
      <span className="sim-binding">
        <select
          value={form.bindingChoice}
          onChange={(e) => patchSimForm({ bindingChoice: e.target.value as BindingChoice })}
          data-testid="sim-binding"
          aria-label="Binding"
        >
          <option value="assist">builtin + root assist</option>
          <option value="builtin">builtin, no assist</option>
          {(policy || form.bindingChoice === 'policy') && (
            <option
              value="policy"
              title={policy ? `${policy.bindingId}@${policy.bindingVersion} (${policy.policyId})` : undefined}
            >
              policy: {policy?.bindingId ?? 'none open'}
            </option>
          )}
        </select>
        {form.bindingChoice === 'assist' && (
          <>
            <input
              type="text"
              inputMode="decimal"
              className="sim-assist"
              value={form.assistText}
              aria-label="Root-assist stiffness, N/m"
              aria-invalid={formProblem?.startsWith('root assist') ?? false}
              onChange={(e) => patchSimForm({ assistText: e.target.value })}
              data-testid="sim-assist"
            />
            <span className="muted">N/m</span>
          </>
        )}
      </span>
    </label>
  );
}

/** Seed, speed and how much of the clip to run. */
export function RunLimitsFields({ form, formProblem }: { form: SimFormState; formProblem: string | null }) {
  return (
    <div className="sim-field sim-row3">
      <LabelledInput
        labelTitle="recorded with the run (the builtin simulation is deterministic)"
        label="Seed"
        inputMode="numeric"
        value={form.seedText}
        aria-invalid={formProblem?.startsWith('seed') ?? false}
        onText={(seedText) => patchSimForm({ seedText })}
        testId="sim-seed"
      />
      <label title="run no faster than this multiple of real time; max: as fast as the simulator goes">
        <span>Speed</span>
        <select
          value={form.pace}
          onChange={(e) => patchSimForm({ pace: e.target.value as PaceChoice })}
          data-testid="sim-pace"
        >
          {(Object.keys(PACE_TEXT) as PaceChoice[]).map((p) => (
            <option key={p} value={p}>
              {PACE_TEXT[p]}
            </option>
          ))}
        </select>
      </label>
      <LabelledInput
        labelTitle="run only the clip's first seconds (empty: all of it)"
        label="First"
        inputMode="decimal"
        placeholder="all"
        value={form.maxSecondsText}
        aria-invalid={formProblem?.startsWith('"first') ?? false}
        onText={(maxSecondsText) => patchSimForm({ maxSecondsText })}
        testId="sim-max-seconds"
        after={<span className="muted">s</span>}
      />
    </div>
  );
}
