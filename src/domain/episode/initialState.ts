/**
 * The state an episode starts from, as a backend's `reset` takes it and the g1-bridge/1 wire
 * carries it: the root pose and the joint angles (and optionally velocities) in the canonical order.
 */
export interface InitialState {
  rootPosM: readonly [number, number, number];
  rootQuatWxyz: readonly [number, number, number, number];
  jointPosRad: readonly number[];
  jointVelRadS?: readonly number[];
  /** Lower the root so the lowest foot contact point touches the floor. */
  placeOnFloor: boolean;
}
