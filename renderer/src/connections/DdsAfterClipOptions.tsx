import { useEndpointsStore, type EndpointsState } from './endpointsStore';

// What the runner the console starts for a G1 over DDS does after a clip (its --after-clip): hold
// the joints while the robot hangs on its gantry, or keep it up with a standing controller from a
// policy folder. The two exclude each other. `standingProblem`: the folder field is invalid.

type AfterClipChoice = 'ddsOnGantry' | 'ddsStanding';

/** Tick or untick one after-clip choice; ticking one clears the other (they exclude each other). */
function chooseAfterClip(choice: AfterClipChoice, checked: boolean): void {
  const patch: Partial<EndpointsState> = { [choice]: checked, actionError: null };
  if (checked) patch[choice === 'ddsOnGantry' ? 'ddsStanding' : 'ddsOnGantry'] = false;
  useEndpointsStore.setState(patch);
}

export function DdsAfterClipOptions({ standingProblem }: { standingProblem: boolean }) {
  const { ddsOnGantry, ddsStanding, ddsStandingPolicyText } = useEndpointsStore();
  return (
    <>
      <label
        className="small dds-gantry"
        title="the runner's --after-clip gantry: after a clip it holds the joints, which does not balance a humanoid"
      >
        <input
          type="checkbox"
          checked={ddsOnGantry}
          onChange={(e) => chooseAfterClip('ddsOnGantry', e.target.checked)}
          data-testid="endpoint-dds-gantry"
        />{' '}
        the robot hangs on its gantry (docs/ROBOT_SETUP.md)
      </label>
      <label
        className="small dds-standing"
        title="the runner's --after-clip standing_policy: after a clip unitree_rl_lab's G1 velocity policy at zero command keeps the robot standing; a fall damps"
      >
        <input
          type="checkbox"
          checked={ddsStanding}
          onChange={(e) => chooseAfterClip('ddsStanding', e.target.checked)}
          data-testid="endpoint-dds-standing"
        />{' '}
        a standing controller keeps it up after a clip:{' '}
        <input
          type="text"
          className="dds-standing-policy"
          placeholder="…/unitree_rl_lab_g1_velocity_v0"
          value={ddsStandingPolicyText}
          spellCheck={false}
          disabled={!ddsStanding}
          aria-label="Standing controller folder"
          aria-invalid={standingProblem}
          data-testid="endpoint-dds-standing-policy"
          onChange={(e) => useEndpointsStore.setState({ ddsStandingPolicyText: e.target.value, actionError: null })}
        />
      </label>
    </>
  );
}
