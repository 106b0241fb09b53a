// Opens a released tracking policy as it is: an .onnx file, or a folder
// that holds one with its deploy configuration, and decides the family from what the files say:
//   <dir>/params/deploy.yaml + <dir>/exported/policy.onnx     a Unitree deploy folder: unitree-rl-lab
//                                                              (Isaac Lab joint order) or mjlab-deploy
//                                                              (unitreeDeployFamily decides)
//   <dir>/config.yaml (wbc_tracking_params_v1) + policy.onnx   wbc-mjlab
//   .onnx with metadata experiment_config (holosoma env)        holosoma-wbt
//   .onnx with dof_names, kp, kd and a --preset (policyPresets)   holosoma-wbt under that preset
//   .onnx with metadata observation_names + anchor_body_name    beyondmimic
//   <dir>/config.yaml + <dir>/exported/<one>.onnx                a HumanoidVerse training config:
//                                                              holomotion (modules.actor.obs_schema)
//                                                              or humanoidverse (obs.obs_dict +
//                                                              robot.dof_names; PBHC, ASAP), told
//                                                              apart by trainingConfigFamily
//   <dir>/observation_config.yaml + *encoder.onnx + *decoder.onnx sonic (gear_sonic_deploy policy folder)
// An .onnx named directly inside such a folder is read with its folder. Anything else is
// refused with what was looked for. YAML is read with `yaml` (eemeli/yaml: maintained, keeps
// node positions), so a bad field is reported with its line and column.

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { isMap, isSeq, Lexer, LineCounter, parseDocument, visit, type Document } from 'yaml';
import { InputError } from '../../domain/problems';
import { printable } from '../../domain/text/printable';
import {
  beyondmimicSpec,
  holosomaSpec,
  unitreeDeploySpec,
  wbcMjlabSpec,
  type ConfigSource,
} from '../../domain/wbc/policyFamilies';
import { holomotionSpec } from '../../domain/wbc/holomotionFamily';
import { humanoidverseSpec, trainingConfigFamily } from '../../domain/wbc/humanoidverseFamily';
import { humanoidverseMotionEntry } from '../../domain/motion/humanoidverseMotionPkl';
import { readJoblibPickle } from '../../domain/motion/joblibPickle';
import { sonicSpec } from '../../domain/wbc/sonicFamily';
import { findPreset, presetIdOf, presetIds, presetKey, type PolicyPreset } from '../../domain/wbc/policyPresets';
import type { OnnxModelInfo } from '../../domain/wbc/onnxModelInfo';
import type { ConfiguredMotion, TrackingPolicySpec } from '../../domain/wbc/trackingPolicy';
import type { PolicyBinding } from '../../domain/wbc/wbcBinding';
import { readBoundedFile, readFileHead } from '../files/boundedRead';
import { readOnnxFile } from './onnxModelReader';

export interface LoadedPolicy {
  /** As the user named it. */
  policyPath: string;
  modelFile: string;
  info: OnnxModelInfo;
  spec: TrackingPolicySpec;
  /** sha256 over the .onnx, its external data and config files, in that order. */
  contentHash: string;
  /** Files that make up the policy, in hashing order. */
  files: string[];
  /** A short name: the .onnx stem, or the folder name for folder layouts. */
  name: string;
  /** The declared preset it was read under (`<id>@<version>`), or null: the files carry the interface. */
  preset: string | null;
}

export interface YamlSource extends ConfigSource {
  doc: Document;
  lines: LineCounter;
}

const MiB = 1024 * 1024;

/**
 * Largest policy configuration (deploy.yaml, config.yaml, observation_config.yaml) read, bytes.
 * The released ones are 2–27 kB (pbhc's Hydra config.yaml is the largest); 512 KiB is 19 times it.
 */
export const POLICY_CONFIG_MAX_BYTES = 512 * 1024;
/**
 * Most YAML tokens in a policy configuration, counted by the yaml library's lexer before the
 * document is composed: composing keeps a node per scalar (a 16 MiB file of 8 M scalars took
 * gigabytes; 512 k scalars, 5 s). pbhc's config.yaml has 8,273 tokens and parses in 0.14 s;
 * 100,000 parse within about a second.
 */
export const POLICY_YAML_MAX_TOKENS = 100_000;
/** Most times the document's aliases may repeat what they name (the yaml library's maxAliasCount). */
export const POLICY_YAML_MAX_ALIAS_COUNT = 100;
/**
 * Largest total of a policy's files (models, external weights, configuration), bytes, checked by
 * stat before any is read: the size one ONNX model may have (FILE_LIMITS.onnxModel). The released
 * policies are 1–3.3 MB together.
 */
export const POLICY_FILES_MAX_BYTES = 512 * MiB;

const POLICY_CONFIG_LIMIT = { bytes: POLICY_CONFIG_MAX_BYTES, what: 'policy configuration files' };

/** Reads a policy configuration YAML, bounded, with line and column in every error. */
export function readPolicyYaml(file: string): YamlSource {
  return readYaml(file);
}

function readYaml(file: string): YamlSource {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(readBoundedFile(file, POLICY_CONFIG_LIMIT));
  } catch (e) {
    throw e instanceof InputError
      ? e
      : new InputError({ file }, `cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  let tokens = 0;
  for (const _ of new Lexer().lex(text))
    if (++tokens > POLICY_YAML_MAX_TOKENS)
      throw new InputError(
        { file },
        `holds more than ${POLICY_YAML_MAX_TOKENS.toLocaleString('en-US')} YAML tokens (the largest released policy configuration has 8,273); refused before it is parsed`,
      );
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    const pos = lines.linePos(e.pos[0]);
    throw new InputError({ file, line: pos.line, column: pos.col }, `not valid YAML (${e.message.split('\n')[0]})`);
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: POLICY_YAML_MAX_ALIAS_COUNT });
  } catch (e) {
    // The yaml library refuses an alias bomb with a ReferenceError naming no place: locate the
    // first alias, where the expansion starts.
    let at: number | undefined;
    visit(doc, {
      Alias(_, node) {
        at = node.range?.[0];
        return visit.BREAK;
      },
    });
    const pos = at !== undefined ? lines.linePos(at) : undefined;
    throw new InputError(
      { file, ...(pos && { line: pos.line, column: pos.col }) },
      at !== undefined
        ? `its aliases expand to more than ${POLICY_YAML_MAX_ALIAS_COUNT} times the nodes they name (an alias bomb); refused`
        : `cannot be read as data (${printable((e as Error).message.split('\n')[0])})`,
    );
  }
  return { file, data, doc, lines };
}

/** Re-throws an adapter's InputError about a YAML key with the key's line and column. */
export function located<T>(src: YamlSource, run: () => T): T {
  try {
    return run();
  } catch (e) {
    if (!(e instanceof InputError) || e.location.file !== src.file || e.location.key === undefined) throw e;
    const keyPath = e.location.key
      .split(/\.|\[(\d+)\]/)
      .filter((k) => k !== undefined && k !== '')
      .map((k) => (/^\d+$/.test(k) ? Number(k) : k));
    let node: unknown = src.doc.contents;
    let found: unknown = null;
    for (const k of keyPath) {
      if (isMap(node)) {
        const pair = node.items.find((p) => (p.key as { value?: unknown })?.value === k);
        if (!pair) break;
        found = pair.key;
        node = pair.value;
      } else if (isSeq(node) && typeof k === 'number') {
        node = node.items[k];
        found = node;
      } else break;
    }
    const range = (found as { range?: [number, number, number] } | null)?.range;
    if (!range) throw e;
    const pos = src.lines.linePos(range[0]);
    throw new InputError({ file: src.file, line: pos.line, column: pos.col, key: e.location.key }, e.reason);
  }
}

const isFile = (p: string) => {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
};

type Layout =
  | { family: 'unitree-deploy'; onnx: string; config: string; name: string }
  | { family: 'wbc-mjlab'; onnx: string; config: string; name: string }
  | { family: 'holomotion'; onnx: string; config: string; name: string }
  | { family: 'sonic'; onnx: string; encoder: string; config: string; name: string }
  | { family: 'onnx'; onnx: string; name: string };

/** A SONIC deploy folder: observation_config.yaml with one *encoder.onnx and one *decoder.onnx. */
function sonicLayout(dir: string): Layout | null {
  const cfg = path.join(dir, 'observation_config.yaml');
  if (!isFile(cfg)) return null;
  const onnx = fs.readdirSync(dir).filter((f) => f.endsWith('.onnx'));
  const enc = onnx.filter((f) => /(^|_)encoder\.onnx$/.test(f));
  const dec = onnx.filter((f) => /(^|_)decoder\.onnx$/.test(f));
  if (enc.length !== 1 || dec.length !== 1)
    throw new InputError(
      { file: dir },
      `holds observation_config.yaml (a SONIC deploy folder) but ${enc.length} encoder and ${dec.length} decoder .onnx files; expected model_encoder.onnx and model_decoder.onnx`,
    );
  return {
    family: 'sonic',
    onnx: path.join(dir, dec[0]),
    encoder: path.join(dir, enc[0]),
    config: cfg,
    name: path.basename(dir),
  };
}

function layoutOf(spec: string): Layout {
  let st: fs.Stats;
  try {
    st = fs.statSync(spec);
  } catch {
    throw new InputError({ file: spec }, 'no such policy file or folder');
  }
  const abs = path.resolve(spec);
  const dir = st.isDirectory() ? abs : path.dirname(abs);
  const up = path.dirname(dir);
  const sonic = sonicLayout(dir);
  if (sonic) return sonic;
  if (st.isDirectory()) {
    if (isFile(path.join(dir, 'params', 'deploy.yaml')) && isFile(path.join(dir, 'exported', 'policy.onnx')))
      return {
        family: 'unitree-deploy',
        onnx: path.join(dir, 'exported', 'policy.onnx'),
        config: path.join(dir, 'params', 'deploy.yaml'),
        name: path.basename(dir),
      };
    if (isFile(path.join(dir, 'config.yaml')) && isFile(path.join(dir, 'policy.onnx')))
      return {
        family: 'wbc-mjlab',
        onnx: path.join(dir, 'policy.onnx'),
        config: path.join(dir, 'config.yaml'),
        name: path.basename(dir),
      };
    const exported = path.join(dir, 'exported');
    const exportedOnnx = fs.existsSync(exported) ? fs.readdirSync(exported).filter((f) => f.endsWith('.onnx')) : [];
    if (isFile(path.join(dir, 'config.yaml')) && exportedOnnx.length > 0) {
      if (exportedOnnx.length > 1)
        throw new InputError(
          { file: exported },
          `holds ${exportedOnnx.length} .onnx files (${exportedOnnx.join(', ')}); name the checkpoint's file`,
        );
      return {
        family: 'holomotion',
        onnx: path.join(exported, exportedOnnx[0]),
        config: path.join(dir, 'config.yaml'),
        name: path.basename(dir),
      };
    }
    const onnx = fs.readdirSync(dir).filter((f) => f.endsWith('.onnx'));
    if (onnx.length === 1)
      return { family: 'onnx', onnx: path.join(dir, onnx[0]), name: path.basename(onnx[0], '.onnx') };
    throw new InputError(
      { file: spec },
      onnx.length === 0
        ? 'the folder holds no policy: expected exported/policy.onnx with params/deploy.yaml (unitree_rl_lab, unitree_rl_mjlab), policy.onnx with config.yaml (wbc-mjlab), or one .onnx file'
        : `the folder holds ${onnx.length} .onnx files (${onnx.join(', ')}); name one`,
    );
  }
  if (!abs.endsWith('.onnx')) throw new InputError({ file: spec }, 'not an .onnx file or a policy folder');
  if (path.basename(dir) === 'exported' && isFile(path.join(up, 'params', 'deploy.yaml')))
    return {
      family: 'unitree-deploy',
      onnx: abs,
      config: path.join(up, 'params', 'deploy.yaml'),
      name: path.basename(up),
    };
  if (path.basename(dir) === 'exported' && isFile(path.join(up, 'config.yaml')))
    return { family: 'holomotion', onnx: abs, config: path.join(up, 'config.yaml'), name: path.basename(up) };
  if (
    isFile(path.join(dir, 'config.yaml')) &&
    /wbc_tracking_params_v1/.test(new TextDecoder().decode(readFileHead(path.join(dir, 'config.yaml'), 4096)))
  )
    return { family: 'wbc-mjlab', onnx: abs, config: path.join(dir, 'config.yaml'), name: path.basename(dir) };
  return { family: 'onnx', onnx: abs, name: path.basename(abs, '.onnx') };
}

/** Ancestors searched for the robot's FSM configuration above a deploy folder. */
const FSM_CONFIG_SEARCH_DEPTH = 6;

/**
 * The motion Unitree's deploy program gives the policy in `dir`, read from the robot's FSM
 * configuration as State_Mimic's constructor reads it: `param::config` is
 * `<proj_dir>/config/config.yaml`; the FSM state whose `policy_dir` (relative to proj_dir)
 * is `dir` names `motion_file` (relative to proj_dir unless absolute) and `fps`. The
 * configuration is looked for in the ancestors of `dir` that hold it under `config/policy/`
 * (the deploy tree's layout; an unrelated config/config.yaml higher up is not read). None found, or no state naming `dir` with a motion: null. A
 * state that names `dir` but whose motion_file or fps is unusable is refused with its key.
 */
export function fsmConfiguredMotion(dir: string): { motion: ConfiguredMotion; configFile: string } | null {
  const target = path.resolve(dir);
  let proj = path.dirname(target);
  for (let i = 0; i < FSM_CONFIG_SEARCH_DEPTH; i++, proj = path.dirname(proj)) {
    const configFile = path.join(proj, 'config', 'config.yaml');
    // Only a deploy tree's own configuration: the policy folder under <proj>/config/policy/.
    if (target.startsWith(path.join(proj, 'config', 'policy') + path.sep) && isFile(configFile)) {
      const cfg = readYaml(configFile);
      const fsm = (cfg.data as { FSM?: unknown } | null)?.FSM;
      if (typeof fsm !== 'object' || fsm === null || Array.isArray(fsm)) return null;
      for (const [state, v] of Object.entries(fsm as Record<string, unknown>)) {
        if (typeof v !== 'object' || v === null) continue;
        const st = v as Record<string, unknown>;
        if (typeof st.policy_dir !== 'string' || path.resolve(proj, st.policy_dir) !== target) continue;
        if (st.motion_file === undefined) return null;
        return located(cfg, () => {
          if (typeof st.motion_file !== 'string' || st.motion_file === '')
            throw new InputError({ file: configFile, key: `FSM.${state}.motion_file` }, 'expected a file path');
          const file = path.resolve(proj, st.motion_file);
          if (!isFile(file))
            throw new InputError({ file: configFile, key: `FSM.${state}.motion_file` }, `no such file: ${file}`);
          if (typeof st.fps !== 'number' || !Number.isFinite(st.fps) || st.fps <= 0 || st.fps > 1000)
            throw new InputError(
              { file: configFile, key: `FSM.${state}.fps` },
              `expected the motion's frame rate (a number in (0, 1000]), got ${printable(JSON.stringify(st.fps) ?? 'nothing')}`,
            );
          return { motion: { file, fps: st.fps, source: `${configFile} FSM.${state}` }, configFile };
        });
      }
      return null;
    }
    if (path.dirname(proj) === proj) break;
  }
  return null;
}

/**
 * A HumanoidVerse policy's own motion: the one .pkl beside config.yaml whose name is the
 * basename of the config's robot.motion.motion_file (the file the policy was trained on, a path
 * on the trainer's machine), at the fps the .pkl states. None, several, or another name: null
 * (the motion is supplied with --clip). The .pkl is read with the restricted unpickler.
 */
export function humanoidverseOwnMotion(cfg: YamlSource): ConfiguredMotion | null {
  const robot = (cfg.data as { robot?: { motion?: { motion_file?: unknown } } } | null)?.robot;
  const named = robot?.motion?.motion_file;
  if (typeof named !== 'string') return null;
  const dir = path.dirname(cfg.file);
  const pkl = fs.readdirSync(dir).filter((f) => f.endsWith('.pkl'));
  if (pkl.length !== 1 || pkl[0] !== path.basename(named)) return null;
  const file = path.join(dir, pkl[0]);
  const { name, fields } = humanoidverseMotionEntry(readJoblibPickle(readBoundedFile(file, 'clip'), file), file);
  const fps = fields.entries.get('fps');
  if (typeof fps !== 'number' || !Number.isFinite(fps) || fps <= 0 || fps > 1000)
    throw new InputError({ file, key: `${name}.fps` }, 'expected the motion’s frame rate (a number in (0, 1000])');
  return { file, fps, source: `${cfg.file} robot.motion.motion_file (${named}; the .pkl beside it)` };
}

function hashFiles(files: { path: string; bytes?: Uint8Array }[], preset: PolicyPreset | null): string {
  const h = createHash('sha256');
  // A declared preset is part of what runs: the same file under two presets hashes apart.
  if (preset) h.update(`preset\0${presetKey(preset)}\0`);
  for (const f of files) {
    const b = f.bytes ?? readBoundedFile(f.path, 'onnxModel'); // external weights or a config file: bounded like the model
    h.update(`${path.basename(f.path)}\0${b.length}\0`);
    h.update(b);
  }
  return h.digest('hex');
}

/** Size of a file by stat (0 when it cannot be stat'ed: its reader reports that). */
const statSize = (p: string): number => {
  try {
    return fs.statSync(p).size;
  } catch {
    return 0;
  }
};

/** Refuses a policy whose files together exceed POLICY_FILES_MAX_BYTES. */
function checkPolicyTotal(policyPath: string, sizes: { path: string; bytes: number }[]): void {
  const total = sizes.reduce((a, s) => a + s.bytes, 0);
  if (total > POLICY_FILES_MAX_BYTES)
    throw new InputError(
      { file: policyPath },
      `the policy's files total ${(total / MiB).toFixed(1)} MiB (${sizes
        .map((s) => `${path.basename(s.path)} ${(s.bytes / MiB).toFixed(1)} MiB`)
        .join(
          ', ',
        )}), more than the ${POLICY_FILES_MAX_BYTES / MiB} MiB limit for a policy; refused before reading them`,
    );
}

/**
 * Reads a policy file or folder; throws InputError naming the file, field and (YAML) line.
 * `presetId` names a declared preset (policyPresets.ts) for an .onnx export that does not carry
 * its own interface; a preset for anything else is refused.
 */
export function loadTrackingPolicy(policyPath: string, presetId: string | null = null): LoadedPolicy {
  const layout = layoutOf(policyPath);
  const preset = presetId === null ? null : findPreset(presetId, layout.onnx);
  if (preset && layout.family !== 'onnx')
    throw new InputError(
      { file: policyPath, key: 'preset' },
      `preset ${preset.id} is for an .onnx export that does not carry its own interface; this is a ${layout.family} policy folder whose ${path.basename(layout.config)} states it; run it without --preset`,
    );
  // Every file the layout names, by stat, before any is read; external weights once their models name them.
  const sizes = [layout.onnx, ...(layout.family === 'sonic' ? [layout.encoder] : [])]
    .concat(layout.family === 'onnx' ? [] : [layout.config])
    .map((p) => ({ path: p, bytes: statSize(p) }));
  checkPolicyTotal(policyPath, sizes);
  const { info, bytes, externalFiles, externalBytes } = readOnnxFile(layout.onnx);
  externalFiles.forEach((p, i) => sizes.push({ path: p, bytes: externalBytes[i] }));
  checkPolicyTotal(policyPath, sizes);
  const files: { path: string; bytes?: Uint8Array }[] = [
    { path: layout.onnx, bytes },
    ...externalFiles.map((p) => ({ path: p })),
  ];
  let spec: TrackingPolicySpec;
  // A config.yaml beside exported/<one>.onnx is HoloMotion's or HumanoidVerse's: read once, its keys decide.
  let holomotionCfg: YamlSource | undefined;
  if (layout.family === 'sonic') {
    const enc = readOnnxFile(layout.encoder);
    enc.externalFiles.forEach((p, i) => sizes.push({ path: p, bytes: enc.externalBytes[i] }));
    checkPolicyTotal(policyPath, sizes);
    files.push({ path: layout.encoder, bytes: enc.bytes }, ...enc.externalFiles.map((p) => ({ path: p })));
    const cfg = readYaml(layout.config);
    files.push({ path: layout.config });
    spec = located(cfg, () => sonicSpec(enc.info, info, cfg));
  } else if (
    layout.family === 'holomotion' &&
    trainingConfigFamily((holomotionCfg = readYaml(layout.config)).data) !== 'holomotion'
  ) {
    const cfg = holomotionCfg;
    files.push({ path: layout.config });
    if (trainingConfigFamily(cfg.data) !== 'humanoidverse')
      throw new InputError(
        { file: layout.config },
        'is neither a HoloMotion training config (modules.actor.obs_schema) nor a HumanoidVerse one (obs.obs_dict with robot.dof_names); the policy family cannot be told',
      );
    const motion = humanoidverseOwnMotion(cfg);
    if (motion) files.push({ path: motion.file });
    spec = located(cfg, () => humanoidverseSpec(info, cfg, motion));
  } else if (layout.family === 'unitree-deploy' || layout.family === 'wbc-mjlab' || layout.family === 'holomotion') {
    const cfg = holomotionCfg ?? readYaml(layout.config);
    files.push({ path: layout.config });
    const family = layout.family;
    const motion = family === 'unitree-deploy' ? fsmConfiguredMotion(path.dirname(path.dirname(layout.config))) : null;
    if (motion) files.push({ path: motion.configFile });
    spec = located(cfg, () =>
      family === 'unitree-deploy'
        ? unitreeDeploySpec(info, cfg, motion?.motion ?? null)
        : family === 'wbc-mjlab'
          ? wbcMjlabSpec(info, cfg)
          : holomotionSpec(info, cfg),
    );
  } else if (preset) {
    spec = holosomaSpec(info, preset);
  } else if (info.metadata.experiment_config !== undefined) {
    spec = holosomaSpec(info);
  } else if (['dof_names', 'kp', 'kd'].every((k) => info.metadata[k] !== undefined)) {
    throw new InputError(
      { file: layout.onnx, key: 'metadata_props.experiment_config' },
      `missing: the file has holosoma's dof_names, kp and kd but not experiment_config, so its observation layout, action scale and control rate are not in it; holosoma runs such an export under a named preset: pass --preset <family>/<name> (declared presets: ${presetIds().join(', ')}); refused rather than guessed`,
    );
  } else if (info.metadata.observation_names !== undefined || info.metadata.anchor_body_name !== undefined) {
    spec = beyondmimicSpec(info);
  } else {
    throw new InputError(
      { file: layout.onnx },
      `the policy's family cannot be told: its metadata has neither observation_names (BeyondMimic) nor experiment_config (holosoma)${
        Object.keys(info.metadata).length
          ? ` (keys: ${Object.keys(info.metadata).join(', ')})`
          : ' (it has no metadata)'
      }, and no deploy.yaml or config.yaml sits beside it; refused rather than guessed`,
    );
  }
  return {
    policyPath,
    modelFile: layout.onnx,
    info,
    spec,
    contentHash: hashFiles(files, preset),
    files: files.map((f) => f.path),
    name: layout.name,
    preset: preset ? presetKey(preset) : null,
  };
}

/**
 * The binding of a loaded policy: id `<family>/<name>` (`+<preset id>` when read under a
 * preset), version `<adapter>+<hash12>@<physics>` (the hash covers the preset too).
 */
export function policyBinding(p: LoadedPolicy, bakedClipId: string | null): PolicyBinding {
  const s = p.spec;
  const presetId = presetIdOf(p.preset);
  return {
    kind: 'onnx',
    family: s.family,
    id: `${s.family}/${p.name}${presetId === null ? '' : `+${presetId}`}`,
    version: `${s.adapter}+${p.contentHash.slice(0, 12)}@${s.physics.id}`,
    controlRateHz: s.controlRateHz,
    label: `${s.family} policy ${p.name} (${s.adapter}, physics ${s.physics.id}${p.preset === null ? '' : `, preset ${p.preset}`})`,
    policyPath: p.policyPath,
    modelFile: p.modelFile,
    checkpointHash: p.contentHash,
    adapter: s.adapter,
    physicsId: s.physics.id,
    bakedClipId,
    ...(p.preset !== null && { preset: p.preset }),
  };
}

/** True when a --binding spec names a policy file or folder (not builtin…, not a binding.json). */
export function isPolicySpec(spec: string): boolean {
  if (spec.endsWith('.onnx')) return true;
  try {
    return fs.statSync(spec).isDirectory();
  } catch {
    return false;
  }
}
