// MuJoCo Menagerie's unitree_g1 body tree (g1.xml), written out here as the tests' own copy of
// the published model: the MJCF reader and our primitive model (assets/g1/g1.xml) are both
// checked against it, so it is deliberately NOT derived from any list in src. The tree is six
// chains; each body's parent is the body before it in its chain, and a chain's first body hangs
// from the chain's parent.

const LEG = ['hip_pitch', 'hip_roll', 'hip_yaw', 'knee', 'ankle_pitch', 'ankle_roll'];
const ARM = ['shoulder_pitch', 'shoulder_roll', 'shoulder_yaw', 'elbow', 'wrist_roll', 'wrist_pitch', 'wrist_yaw'];
const links = (side: 'left' | 'right', parts: readonly string[]): string[] => parts.map((p) => `${side}_${p}_link`);

const CHAINS: readonly { parent: string; bodies: readonly string[] }[] = [
  { parent: 'world', bodies: ['pelvis'] },
  { parent: 'pelvis', bodies: links('left', LEG) },
  { parent: 'pelvis', bodies: links('right', LEG) },
  { parent: 'pelvis', bodies: ['waist_yaw_link', 'waist_roll_link', 'torso_link'] },
  { parent: 'torso_link', bodies: links('left', ARM) },
  { parent: 'torso_link', bodies: links('right', ARM) },
];

/** Menagerie's 30 bodies in MuJoCo's depth-first order (body 0, the world, excluded). */
export const MENAGERIE_G1_BODY_NAMES: readonly string[] = CHAINS.flatMap((c) => c.bodies);

/** Parent of each body above, by name ('world' for the pelvis). */
export const MENAGERIE_G1_BODY_PARENTS: readonly string[] = CHAINS.flatMap((c) =>
  c.bodies.map((_, i) => (i === 0 ? c.parent : c.bodies[i - 1])),
);
