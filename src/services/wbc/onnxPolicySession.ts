import { createHash } from 'node:crypto';
import { Tensor, type InferenceSession } from 'onnxruntime-node';
import { binding as ortBinding, initOrt, type Binding } from 'onnxruntime-node/dist/binding.js';
import { InputError } from '../../domain/problems';
import { describeObservation, observationSize, policyInterfaceProblems } from '../../domain/wbc/observationBuilder';
import { onnxDtypeName } from '../../domain/wbc/onnxModelInfo';
import type { OnnxBinding, PolicyInterface } from '../../domain/wbc/wbcBinding';
import { readBoundedFileAsync } from '../files/boundedRead';

// Opening an ONNX policy session and checking it against the binding's declared interface.
// Every mismatch is found here, when the binding is loaded — never mid-rollout: the declared
// input and output exist, the model needs no other input, shapes are [1, D] / [D] / [batch, D]
// with D = the observation the interface builds and [1, 29] / [29] / [batch, 29] for the action,
// dtype float32; then one trial inference on a zero observation confirms the actual output
// (size, dtype, finite values).
//
// Sessions are onnxruntime-node's native session object (`onnxruntime-node/dist/binding`, typed
// and shipped with the package), whose load and run are synchronous: the public
// `InferenceSession.run` only wraps that same native call in a setImmediate. Running it directly
// keeps a controller step synchronous, so a simulator worker's control loop never has to yield
// to its event loop for an inference. Same native code, same results.

/**
 * Fixed session options: single-threaded, sequential, fixed graph optimisation level, so the
 * same inputs give bit-identical outputs on the same machine (the replay audit depends on it).
 */
export const ONNX_SESSION_OPTIONS: Readonly<InferenceSession.SessionOptions> = {
  executionProviders: ['cpu'],
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionMode: 'sequential',
  graphOptimizationLevel: 'basic',
  logSeverityLevel: 3,
};

type ValueMetadata = InferenceSession.ValueMetadata;

function toValueMetadata(m: Binding.ValueMetadata): ValueMetadata {
  if (!m.isTensor) return { name: m.name, isTensor: false };
  const shape = m.shape.map((d, i) => (d >= 0 ? d : m.symbolicDimensions[i] || '?'));
  return { name: m.name, isTensor: true, type: onnxDtypeName(m.type) as Tensor.Type, shape };
}

/** A loaded policy session; run() is synchronous. */
export interface OnnxSession {
  readonly inputMetadata: readonly ValueMetadata[];
  readonly outputMetadata: readonly ValueMetadata[];
  /** Runs the model; returns the requested output tensor. */
  run(feeds: Record<string, Tensor>, outputName: string): Tensor;
  /** Runs the model once; returns the requested output tensors by name. */
  runMany(feeds: Record<string, Tensor>, outputNames: readonly string[]): Record<string, Tensor>;
  release(): void;
}

/** Initialises onnxruntime-node's native runtime (once per process; later calls are free). */
export function warmUpOnnxRuntime(): void {
  initOrt();
}

/**
 * Loads ONNX bytes, or a model file by path, into a native session with the given options
 * (throws onnxruntime's error). A model whose weights live in an external-data file beside it
 * (`policy.onnx.data`) must be loaded by path: onnxruntime resolves the data relative to it.
 */
export function createOnnxSession(
  model: Uint8Array | { path: string },
  options: InferenceSession.SessionOptions = ONNX_SESSION_OPTIONS,
): OnnxSession {
  initOrt();
  const native = new ortBinding.InferenceSession();
  if (model instanceof Uint8Array)
    native.loadModel(model.buffer as ArrayBuffer, model.byteOffset, model.byteLength, { ...options });
  else native.loadModel(model.path, { ...options });
  const fetchesFor = new Map<string, Record<string, null>>();
  const runOptions = {};
  let released = false;
  return {
    inputMetadata: native.inputMetadata.map(toValueMetadata),
    outputMetadata: native.outputMetadata.map(toValueMetadata),
    run(feeds, outputName) {
      let fetches = fetchesFor.get(outputName);
      if (!fetches) fetchesFor.set(outputName, (fetches = { [outputName]: null }));
      const r = native.run(feeds, fetches, runOptions)[outputName];
      return r instanceof Tensor ? r : new Tensor((r as Tensor).type, (r as Tensor).data, (r as Tensor).dims);
    },
    runMany(feeds, outputNames) {
      const key = outputNames.join('\0');
      let fetches = fetchesFor.get(key);
      if (!fetches) fetchesFor.set(key, (fetches = Object.fromEntries(outputNames.map((n) => [n, null]))));
      const r = native.run(feeds, fetches, runOptions);
      const out: Record<string, Tensor> = {};
      for (const n of outputNames) {
        const t = r[n] as Tensor;
        out[n] = t instanceof Tensor ? t : new Tensor(t.type, t.data, t.dims);
      }
      return out;
    },
    release() {
      if (released) return;
      released = true;
      native.dispose();
    },
  };
}

const fmtShape = (s: ReadonlyArray<number | string>): string => (s.length === 0 ? '[?]' : `[${s.join(', ')}]`);
const fmtMeta = (m: ValueMetadata): string =>
  m.isTensor ? `${m.name} ${fmtShape(m.shape)} ${m.type}` : `${m.name} (not a tensor)`;

/** A dim that is fixed to `n`, or symbolic / unknown (checked by the trial inference). */
const dimIs = (d: number | string | undefined, n: number): boolean => typeof d !== 'number' || d < 0 || d === n;
const isFixed = (d: number | string | undefined): d is number => typeof d === 'number' && d >= 0;

export interface OnnxIoCheck {
  /** One message per mismatch (empty when the model matches). */
  problems: string[];
  /** Dims of the tensor to feed: [1, D] or [D]. */
  inputDims: number[];
}

/**
 * Pure check of a model's input/output metadata against the declared interface. `joints` is
 * the action size (29 for the G1).
 */
export function checkOnnxIo(
  inputs: readonly ValueMetadata[],
  outputs: readonly ValueMetadata[],
  iface: PolicyInterface,
  joints = 29,
): OnnxIoCheck {
  const problems: string[] = [];
  const D = observationSize(iface, joints);
  let inputDims = [1, D];

  const input = inputs.find((m) => m.name === iface.inputName);
  if (!input) {
    problems.push(
      `the model has no input "${iface.inputName}" (its inputs: ${inputs.map(fmtMeta).join(', ') || 'none'})`,
    );
  } else if (!input.isTensor) {
    problems.push(`input "${input.name}" is not a tensor`);
  } else {
    if (input.type !== 'float32') problems.push(`input "${input.name}" is ${input.type}; the console feeds float32`);
    const s = input.shape;
    if (s.length === 1) {
      inputDims = [D];
      if (isFixed(s[0]) && s[0] !== D) problems.push(featureMismatch(input.name, s[0], D, iface, joints));
    } else if (s.length === 2) {
      if (!dimIs(s[0], 1))
        problems.push(`input "${input.name}" has batch dimension ${s[0]}; the console feeds one observation (batch 1)`);
      if (isFixed(s[1]) && s[1] !== D) problems.push(featureMismatch(input.name, s[1], D, iface, joints));
    } else if (s.length !== 0) {
      problems.push(
        `input "${input.name}" has shape ${fmtShape(s)}; expected [1, ${D}] or [${D}] (a flat observation)`,
      );
    }
  }
  const others = inputs.filter((m) => m.name !== iface.inputName);
  if (input && others.length > 0)
    problems.push(
      `the model also needs input${others.length > 1 ? 's' : ''} ${others.map((m) => `"${m.name}"`).join(', ')}, which the interface does not declare`,
    );

  const output = outputs.find((m) => m.name === iface.outputName);
  if (!output) {
    problems.push(
      `the model has no output "${iface.outputName}" (its outputs: ${outputs.map(fmtMeta).join(', ') || 'none'})`,
    );
  } else if (!output.isTensor) {
    problems.push(`output "${output.name}" is not a tensor`);
  } else {
    if (output.type !== 'float32') problems.push(`output "${output.name}" is ${output.type}; expected float32`);
    const s = output.shape;
    const last = s[s.length - 1];
    const fixedCount = s.every(isFixed) ? (s as number[]).reduce((a, b) => a * b, 1) : null;
    if (s.length > 2)
      problems.push(`output "${output.name}" has shape ${fmtShape(s)}; expected [1, ${joints}] or [${joints}]`);
    else if (s.length === 2 && !dimIs(s[0], 1))
      problems.push(`output "${output.name}" has batch dimension ${s[0]}; expected 1`);
    else if (s.length > 0 && isFixed(last) && last !== joints)
      problems.push(`output "${output.name}" has ${last} values per step; the robot has ${joints} joints to command`);
    else if (fixedCount !== null && s.length > 0 && fixedCount !== joints)
      problems.push(`output "${output.name}" has shape ${fmtShape(s)}; expected [1, ${joints}]`);
  }
  return { problems, inputDims };
}

function featureMismatch(name: string, got: number, want: number, iface: PolicyInterface, joints: number): string {
  return `input "${name}" has ${got} features, the declared interface builds ${want} (${describeObservation(iface, joints)})`;
}

export interface OpenedOnnxPolicy {
  session: OnnxSession;
  /** Length D of the observation. */
  observationSize: number;
  /** Dims of the fed tensor: [1, D] or [D]. */
  inputDims: readonly number[];
}

function fail(binding: OnnxBinding, reason: string): never {
  throw new InputError({ file: binding.modelFile }, reason);
}

/**
 * Reads the binding's .onnx (or uses `modelBytes`), checks its sha256 against the binding's
 * checkpointHash, opens a session with ONNX_SESSION_OPTIONS and checks it against the declared
 * interface, including one trial inference. Throws InputError naming the .onnx file and every
 * mismatch; the session is released on failure.
 */
export async function openOnnxPolicy(
  binding: OnnxBinding,
  joints = 29,
  modelBytes?: Uint8Array,
): Promise<OpenedOnnxPolicy> {
  const iface = binding.interface;
  const ifaceProblems = policyInterfaceProblems(iface, joints);
  if (ifaceProblems.length > 0) fail(binding, `the declared interface is invalid: ${ifaceProblems.join('; ')}`);

  let bytes = modelBytes;
  if (!bytes) {
    try {
      bytes = await readBoundedFileAsync(binding.modelFile, 'onnxModel');
    } catch (e) {
      fail(
        binding,
        `cannot read the model (${e instanceof InputError ? e.reason : ((e as NodeJS.ErrnoException).code ?? (e as Error).message)})`,
      );
    }
  }
  const hash = createHash('sha256').update(bytes).digest('hex');
  if (binding.checkpointHash && hash !== binding.checkpointHash)
    fail(
      binding,
      `sha256 ${hash} differs from the binding's checkpointHash ${binding.checkpointHash} (the file changed since the binding was loaded)`,
    );

  let session: OnnxSession;
  try {
    session = createOnnxSession(bytes);
  } catch (e) {
    fail(binding, `not a loadable ONNX model (onnxruntime: ${(e as Error).message})`);
  }
  try {
    const io = checkOnnxIo(session.inputMetadata, session.outputMetadata, iface, joints);
    if (io.problems.length > 0) fail(binding, io.problems.join('; '));
    const D = observationSize(iface, joints);
    let out: Tensor | undefined;
    try {
      out = session.run(
        { [iface.inputName]: new Tensor('float32', new Float32Array(D), io.inputDims) },
        iface.outputName,
      );
    } catch (e) {
      fail(
        binding,
        `a trial inference with a [${io.inputDims.join(', ')}] float32 observation failed (onnxruntime: ${(e as Error).message})`,
      );
    }
    if (!out) fail(binding, `a trial inference returned no "${iface.outputName}"`);
    if (out.type !== 'float32') fail(binding, `output "${iface.outputName}" is ${out.type}; expected float32`);
    if (out.size !== joints)
      fail(
        binding,
        `output "${iface.outputName}" has shape [${out.dims.join(', ')}] (${out.size} values) at run time; the robot has ${joints} joints to command`,
      );
    const data = out.data as Float32Array;
    for (let j = 0; j < data.length; j++)
      if (!Number.isFinite(data[j]))
        fail(binding, `a trial inference on a zero observation gave a non-finite action (${data[j]} for joint ${j})`);
    return { session, observationSize: D, inputDims: io.inputDims };
  } catch (e) {
    session.release();
    throw e;
  }
}

/** Opens the binding's model, checks it against the declared interface, and closes it again. */
export async function verifyOnnxBinding(binding: OnnxBinding, joints = 29): Promise<void> {
  const p = await openOnnxPolicy(binding, joints);
  p.session.release();
}
