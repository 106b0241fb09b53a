import { describe, expect, it } from 'vitest';
import { decodeMotionFile } from '../../src/domain/motion/decodeMotionFile';
import {
  ALLOWED_PICKLE_GLOBALS,
  openTorchArchive,
  PickleDict,
  PickleTuple,
  restrictedUnpickle,
  TorchTensor,
} from '../../src/domain/motion/torchArchive';
import { enc, expectInputError, zipBytes } from './motionTestHelpers';
import { contiguousTensor, PickleWriter, pickleDict, torchZipBytes } from './peerMotionTestHelpers';

// The restricted unpickler reads tensors and plain containers and nothing else: every other
// global is refused at the opcode that names it, before anything could be called.

const file = 'hostile.motion';
const key = 'data.pkl';

describe('restricted unpickler', () => {
  it('reads plain containers: dict, list, tuple, str, int, float, bool, None, memo', () => {
    // {'a': [1, -2, 2.5, True, None, 'x'], 'b': (7,), 'c': <memo of the list>}
    const w = new PickleWriter().op(0x80, 2, 0x7d, 0x28);
    w.str('a').op(0x5d, 0x71, 0x01, 0x28).int(1).int(-2).float(2.5).op(0x88, 0x4e).str('x').op(0x65);
    w.str('b').int(7).op(0x85);
    w.str('c').op(0x68, 0x01);
    w.op(0x75, 0x2e);
    const v = restrictedUnpickle(w.bytes(), file, key);
    expect(v).toBeInstanceOf(PickleDict);
    const d = (v as PickleDict).entries;
    expect(d.get('a')).toEqual([1, -2, 2.5, true, null, 'x']);
    expect(d.get('b')).toEqual(new PickleTuple([7]));
    expect(d.get('c')).toBe(d.get('a'));
  });

  it('reads a tensor as torch.save pickles it, without calling anything', () => {
    const t = contiguousTensor('0', [2, 3], [1, 2, 3, 4, 5, 6]);
    const v = restrictedUnpickle(pickleDict({ x: t }), file, key) as PickleDict;
    const x = v.entries.get('x') as TorchTensor;
    expect(x).toBeInstanceOf(TorchTensor);
    expect(x).toMatchObject({ offset: 0, shape: [2, 3], stride: [3, 1] });
    expect(x.storage).toMatchObject({ kind: 'storage', dtype: 'float32', key: '0', numel: 6 });
  });

  it.each([
    ['os', 'system'],
    ['builtins', 'eval'],
    ['subprocess', 'Popen'],
    ['torch', 'load'],
    ['numpy.core.multiarray', '_reconstruct'],
  ])('refuses the global %s.%s (GLOBAL), naming it', (module, name) => {
    // cos\nsystem\n(X'echo pwned'tR. — refused at the GLOBAL, at byte 2
    const w = new PickleWriter().op(0x80, 2).global(module, name).op(0x28).str('echo pwned').op(0x74, 0x52, 0x2e);
    expectInputError(
      () => restrictedUnpickle(w.bytes(), file, key),
      { file, key },
      new RegExp(
        `names the global ${module.replace(/\./g, '\\.')}\\.${name}, which is not allowed.*\\(at byte 2 of the pickle\\)`,
      ),
    );
  });

  it('refuses a global built with STACK_GLOBAL (protocol 4), naming it', () => {
    const short = (s: string) => [0x8c, s.length, ...enc(s)];
    const bytes = Uint8Array.from([
      0x80,
      4,
      ...short('builtins'),
      ...short('eval'),
      0x93,
      0x28,
      ...short('1+1'),
      0x74,
      0x52,
      0x2e,
    ]);
    expectInputError(
      () => restrictedUnpickle(bytes, file, key),
      { file, key },
      /names the global builtins\.eval, which is not allowed/,
    );
  });

  it.each([
    [0x62, 'BUILD'],
    [0x81, 'NEWOBJ'],
    [0x69, 'INST'],
    [0x43, 'SHORT_BINBYTES'],
  ])('refuses opcode %i (%s)', (op, name) => {
    const bytes = Uint8Array.from([0x80, 2, 0x7d, op, 0x2e]);
    expectInputError(
      () => restrictedUnpickle(bytes, file, key),
      { file, key },
      new RegExp(`opcode ${name}, which is not allowed`),
    );
  });

  it('an allowed global that is not a constructor (torch.FloatStorage called by REDUCE) is refused', () => {
    const w = new PickleWriter().op(0x80, 2).global('torch', 'FloatStorage').op(0x29, 0x52, 0x2e);
    expectInputError(
      () => restrictedUnpickle(w.bytes(), file, key),
      { file, key },
      /REDUCE calls torch\.FloatStorage, which is not a constructor/,
    );
  });

  it('a truncated pickle, or one that ends with an unbalanced stack', () => {
    expectInputError(
      () => restrictedUnpickle(Uint8Array.from([0x80, 2, 0x58, 9, 0, 0, 0, 0x61]), file, key),
      { file, key },
      /truncated/,
    );
    expectInputError(
      () => restrictedUnpickle(Uint8Array.from([0x80, 2, 0x4e, 0x4e, 0x2e]), file, key),
      { file, key },
      /unbalanced/,
    );
  });

  it('lists exactly the globals it accepts', () => {
    expect(ALLOWED_PICKLE_GLOBALS).toContain('torch._utils._rebuild_tensor_v2');
    expect(ALLOWED_PICKLE_GLOBALS).toContain('collections.OrderedDict');
    expect(ALLOWED_PICKLE_GLOBALS.filter((g) => !g.startsWith('torch.') || !g.endsWith('Storage'))).toEqual([
      'torch._utils._rebuild_tensor_v2',
      'collections.OrderedDict',
    ]);
  });
});

describe('torch.save archive', () => {
  it('a .motion archive whose pickle calls os.system is refused by decodeMotionFile, naming the global and the member', () => {
    const t = contiguousTensor('0', [2, 29], new Array(58).fill(0));
    const pickle = pickleDict({ fps: 30, dof_pos: t }, (w) =>
      w.str('evil').global('os', 'system').op(0x28).str('rm -rf ~').op(0x74, 0x52),
    );
    const bytes = torchZipBytes('evil', pickle, [t]);
    expectInputError(
      () => decodeMotionFile(bytes, { file }),
      { file, key: 'evil/data.pkl' },
      /the pickle names the global os\.system, which is not allowed/,
    );
  });

  it('reads big-endian storages when byteorder says big', () => {
    const t = contiguousTensor('0', [3], [1.5, -2, 3.25]);
    const pickle = pickleDict({ x: t });
    const be = new Uint8Array(12);
    [1.5, -2, 3.25].forEach((v, i) => new DataView(be.buffer).setFloat32(i * 4, v, false));
    const bytes = zipBytes([
      { name: 'a/data.pkl', data: pickle },
      { name: 'a/byteorder', data: enc('big') },
      { name: 'a/data/0', data: be },
    ]);
    const a = openTorchArchive(bytes, file);
    expect(a.littleEndian).toBe(false);
    expect(Array.from(a.readFloatTensor((a.root as PickleDict).entries.get('x') as TorchTensor, 'x'))).toEqual([
      1.5, -2, 3.25,
    ]);
  });

  it('is not taken for a torch archive when a member lies outside the archive folder', () => {
    const t = contiguousTensor('0', [3], [1, 2, 3]);
    const bytes = torchZipBytes('a', pickleDict({ x: t }), [t], [{ name: 'other/file', data: enc('x') }]);
    expectInputError(() => openTorchArchive(bytes, file), { file }, /not a torch\.save archive/);
  });
});
