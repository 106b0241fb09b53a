import type { WbcBinding } from './wbcBinding';

// The one short name of a binding that people read in the console and the CLI:
// enough to tell two bindings of one campaign apart at a glance. Its id alone does not: every
// builtin binding is "builtin", whatever its gains and assist. The binding key (`id@version`) stays
// the identity; this name is what lists, matrix headers and prompts show (the key in their titles).
//   builtin          builtin@pd1-1a2b3c4d5e · assist 3000 N/m   |   builtin@pd1-… · no assist
//   released policy  beyondmimic policy dance1@1a2b3c4d           (family, name, checkpoint)
//   declared onnx    onnx my-policy@v2
//   remote           remote g1-onboard@v1

/** Hex digits of a policy's checkpoint hash in its name (its version holds all of them). */
const CHECKPOINT_HEX = 8;

/** A stiffness without trailing zeros: 3000, 2500.5. */
const gainText = (v: number): string => (Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(6))));

/** The short name of a binding (see the file header). */
export function bindingName(b: WbcBinding): string {
  const key = `${b.id}@${b.version}`;
  switch (b.kind) {
    case 'builtin':
      return `${key} · ${b.rootAssist && b.rootAssist.kpNPerM > 0 ? `assist ${gainText(b.rootAssist.kpNPerM)} N/m` : 'no assist'}`;
    case 'onnx':
      if (b.family !== undefined) {
        const name = b.id.startsWith(`${b.family}/`) ? b.id.slice(b.family.length + 1) : b.id;
        return `${b.family} policy ${name}@${b.checkpointHash.slice(0, CHECKPOINT_HEX)}`;
      }
      return `onnx ${key}`;
    case 'remote':
      return `remote ${key}`;
  }
}
