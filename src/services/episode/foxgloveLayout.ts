import { McapIndexedReader, type IReadable } from '@mcap/core';
import fs from 'node:fs/promises';
import { G1_JOINT_NAMES } from '../../domain/robot/g1Joints';
import { chunkCompressionReady, EPISODE_DECOMPRESS_HANDLERS } from './chunkCompression';
import { messageDecoder } from './episodeCodec';
import { TOPICS } from './episodeSchemas';
import { EXEC_PREFIX, WORLD_FRAME } from './sceneTracks';

// A Foxglove / Lichtblick layout for the campaign's episodes (`motionbench export-layout`): a 3D
// panel drawing both robots from the episodes' own tracks (/exec/scene and /ref/scene on the
// /exec/transforms and /ref/transforms trees, fixed frame `world`, following the executed pelvis),
// a plot of the live readings (/metrics/live) and a plot of three joints, executed against the
// reference. It names topics and fields only, so one layout opens with any episode of the format.
//
// Field names in message paths are the schemas' own (snake_case, as the .proto declares them):
// Foxglove decodes protobuf with the names of the FileDescriptorSet. The layout document is the
// one Foxglove's "Import layout" reads: configById, layout (the mosaic tree), globalVariables,
// userNodes, playbackConfig.

export const LAYOUT_PANEL_IDS = {
  scene: '3D!motionbench',
  metrics: 'Plot!motionbench-metrics',
  joints: 'Plot!motionbench-joints',
};

/** Joints plotted executed vs reference (canonical indices): a hip pitch, a knee, an elbow. */
const PLOTTED_JOINTS = ['left_hip_pitch_joint', 'left_knee_joint', 'left_elbow_joint'];

const path = (value: string, label: string, color?: string) => ({
  value,
  enabled: true,
  timestampMethod: 'receiveTime',
  label,
  ...(color && { color }),
});

/** A Plot panel's config: the paths against the episode's time, legends on, synced with the others. */
const plotPanel = (title: string, paths: ReturnType<typeof path>[]) => ({
  title,
  paths,
  showXAxisLabels: true,
  showYAxisLabels: true,
  showLegend: true,
  legendDisplay: 'floating',
  isSynced: true,
  xAxisVal: 'timestamp',
});

export function foxgloveLayout(rootBody: string): Record<string, unknown> {
  const jointPaths = PLOTTED_JOINTS.flatMap((name) => {
    const j = G1_JOINT_NAMES.indexOf(name as (typeof G1_JOINT_NAMES)[number]);
    if (j < 0) throw new Error(`${name} is not a G1 joint`);
    return [
      path(`${TOPICS.executed}.joint_pos_rad[${j}]`, `${name} executed (rad)`),
      path(`${TOPICS.reference}.joint_pos_rad[${j}]`, `${name} reference (rad)`),
    ];
  });
  return {
    configById: {
      [LAYOUT_PANEL_IDS.scene]: {
        followMode: 'follow-position',
        followTf: `${EXEC_PREFIX}/${rootBody}`,
        scene: { enableStats: false, transforms: { showLabel: false, axisScale: 0.3 } },
        transforms: {},
        topics: {
          [TOPICS.execScene]: { visible: true },
          [TOPICS.refScene]: { visible: true },
          [TOPICS.execTransforms]: { visible: true },
          [TOPICS.refTransforms]: { visible: true },
        },
        layers: {
          'motionbench-grid': {
            visible: true,
            frameLocked: true,
            label: 'Floor',
            instanceId: 'motionbench-grid',
            layerId: 'foxglove.Grid',
            frameId: WORLD_FRAME,
            lineWidth: 1,
            color: '#6b7280',
            size: 10,
            divisions: 20,
            position: [0, 0, 0],
            rotation: [0, 0, 0],
            order: 1,
          },
        },
        cameraState: {
          distance: 4,
          perspective: true,
          phi: 65,
          thetaOffset: 45,
          targetOffset: [0, 0, 0],
          target: [0, 0, 0],
          targetOrientation: [0, 0, 0, 1],
          fovy: 45,
          near: 0.01,
          far: 5000,
        },
        publish: {
          type: 'point',
          poseTopic: '/move_base_simple/goal',
          pointTopic: '/clicked_point',
          poseEstimateTopic: '/initialpose',
        },
        imageMode: {},
      },
      [LAYOUT_PANEL_IDS.metrics]: plotPanel('Live readings (lower is better)', [
        path(`${TOPICS.metricsLive}.mpjpe_l_mm`, 'MPJPE-l (mm)'),
        path(`${TOPICS.metricsLive}.joint_rmse_rad`, 'joint-position RMSE (rad)'),
      ]),
      [LAYOUT_PANEL_IDS.joints]: plotPanel('Joints, executed vs reference', jointPaths),
    },
    globalVariables: {},
    userNodes: {},
    playbackConfig: { speed: 1 },
    layout: {
      first: LAYOUT_PANEL_IDS.scene,
      second: {
        first: LAYOUT_PANEL_IDS.metrics,
        second: LAYOUT_PANEL_IDS.joints,
        direction: 'column',
        splitPercentage: 50,
      },
      direction: 'row',
      splitPercentage: 60,
    },
  };
}

export interface EpisodeTracks {
  format: string;
  topics: string[];
  /** Whether the episode has everything the layout's 3D panel draws. */
  has3d: boolean;
  /** The executed tree's root body (the frame under `world`), from its first transforms; null without. */
  rootBody: string | null;
}

const TRACK_TOPICS: string[] = [TOPICS.execScene, TOPICS.execTransforms, TOPICS.refScene, TOPICS.refTransforms];

/** An episode file's format and topics, from its summary (indexed reader: nothing decoded). */
export async function episodeTracks(file: string): Promise<EpisodeTracks> {
  await chunkCompressionReady();
  const fh = await fs.open(file, 'r');
  try {
    const readable: IReadable = {
      size: async () => BigInt((await fh.stat()).size),
      read: async (offset, length) => {
        const buf = new Uint8Array(Number(length));
        await fh.read(buf, 0, Number(length), Number(offset));
        return buf;
      },
    };
    const reader = await McapIndexedReader.Initialize({ readable, decompressHandlers: EPISODE_DECOMPRESS_HANDLERS });
    let format = '';
    for await (const m of reader.readMetadata({ name: 'episode' })) format = m.metadata.get('format') ?? '';
    const topics = [...new Set([...reader.channelsById.values()].map((c) => c.topic))].sort();
    let rootBody: string | null = null;
    for await (const m of reader.readMessages({ topics: [TOPICS.execTransforms] })) {
      const ch = reader.channelsById.get(m.channelId)!;
      const s = reader.schemasById.get(ch.schemaId);
      const msg = messageDecoder(ch.messageEncoding, s ?? null)(m.data) as {
        transforms?: { parentFrameId?: string; childFrameId?: string }[];
      };
      const root = msg.transforms?.find((t) => t.parentFrameId === WORLD_FRAME)?.childFrameId;
      if (root?.startsWith(`${EXEC_PREFIX}/`)) rootBody = root.slice(EXEC_PREFIX.length + 1);
      break;
    }
    return { format, topics, has3d: TRACK_TOPICS.every((t) => topics.includes(t)), rootBody };
  } finally {
    await fh.close();
  }
}
