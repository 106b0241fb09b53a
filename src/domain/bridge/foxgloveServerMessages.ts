import { z } from 'zod';

// Validation of what a Foxglove WebSocket server (foxglove.websocket.v1) sends a client, before
// any of it reaches @foxglove/ws-protocol's FoxgloveClient or our handlers: unchecked, one
// `{"op":"advertise","channels":null}` from a hostile or broken bridge crashes the console.
// The library parses and dispatches without checking shapes; this module checks every field the
// console reads, bounds every array and string, and answers { ok, value } or { ok: false,
// reason } with the offending field's path, never throwing. A message of an op the console does
// not use (parameters, services, connection graph, assets) is `ignored`: it is dropped before the
// library sees it, so no unchecked payload reaches any listener.
// Spec: github.com/foxglove/ws-protocol docs/spec.md (JSON ops; binary opcodes 1 = message data:
// u32 subscription id + u64 receive timestamp + payload, 2 = time: u64).

export const FOXGLOVE_CLIENT_LIMITS = {
  /** A JSON (text) control message, bytes (UTF-16 code units as a proxy). Advertisements of big schemas fit. */
  textChars: 4_000_000,
  /** Channels in one advertise / ids in one unadvertise. */
  channels: 10_000,
  /** topic, schemaName, encoding, status ids, capability names. */
  nameChars: 1_000,
  /**
   * A channel's schema text. A channel over it is left out of its advertisement and reported on
   * its own (`refusedChannels`); the other channels of the same advertisement go on.
   */
  schemaChars: 1_000_000,
  /** A status message's text, and each metadata value. */
  messageChars: 10_000,
  /** Entries of serverInfo metadata. */
  metadataEntries: 1_000,
} as const;

const L = FOXGLOVE_CLIENT_LIMITS;
const name = z.string().max(L.nameChars);
const id = z.number().int().min(0).max(0xffff_ffff);

const channelSchema = z.object({
  id,
  topic: name.min(1),
  encoding: name,
  schemaName: name,
  // Bounded per channel after the parse (refusedChannels), so one big schema does not refuse the rest.
  schema: z.string(),
  schemaEncoding: name.optional(),
});

const serverInfoSchema = z.object({
  op: z.literal('serverInfo'),
  name: z.string().max(L.messageChars),
  capabilities: z.array(name).max(100),
  supportedEncodings: z.array(name).max(100).optional(),
  metadata: z
    .record(name, z.string().max(L.messageChars))
    .refine((m) => Object.keys(m).length <= L.metadataEntries, { message: `at most ${L.metadataEntries} entries` })
    .optional(),
  sessionId: z.string().max(L.nameChars).optional(),
});

const statusSchema = z.object({
  op: z.literal('status'),
  level: z.union([z.literal(0), z.literal(1), z.literal(2)]),
  message: z.string().max(L.messageChars),
  id: name.optional(),
});

const removeStatusSchema = z.object({ op: z.literal('removeStatus'), statusIds: z.array(name).max(L.channels) });
const advertiseSchema = z.object({ op: z.literal('advertise'), channels: z.array(channelSchema).max(L.channels) });
const unadvertiseSchema = z.object({ op: z.literal('unadvertise'), channelIds: z.array(id).max(L.channels) });

const USED = {
  serverInfo: serverInfoSchema,
  status: statusSchema,
  removeStatus: removeStatusSchema,
  advertise: advertiseSchema,
  unadvertise: unadvertiseSchema,
} as const;
/** Ops of the spec the console does not act on: dropped unread. */
const IGNORED_OPS: readonly string[] = [
  'parameterValues',
  'advertiseServices',
  'unadvertiseServices',
  'connectionGraphUpdate',
  'serviceCallFailure',
];

export type FoxgloveServerTextMessage =
  | z.infer<typeof serverInfoSchema>
  | z.infer<typeof statusSchema>
  | z.infer<typeof removeStatusSchema>
  | z.infer<typeof advertiseSchema>
  | z.infer<typeof unadvertiseSchema>;

export type ServerFrameCheck = { ok: true; ignored: boolean } | { ok: false; reason: string };

/** A channel left out of an advertisement, with why (its topic and the limit named). */
export interface RefusedChannel {
  id: number;
  topic: string;
  reason: string;
}

function firstIssue(err: z.ZodError): string {
  const i = err.issues[0];
  const path =
    i.path.length > 0
      ? i.path
          .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
          .join('')
          .replace(/^\./, '')
      : '(message)';
  return `${path}: ${i.message}`;
}

/**
 * Checks one text frame from the server: JSON, an object with a known op, every field the console
 * reads. An advertisement's channels whose schema is over FOXGLOVE_CLIENT_LIMITS.schemaChars are
 * left out of `value` and listed in `refusedChannels`.
 */
export function checkServerText(
  text: string,
): ServerFrameCheck & { value?: FoxgloveServerTextMessage; refusedChannels?: RefusedChannel[] } {
  if (text.length > L.textChars)
    return { ok: false, reason: `text message of ${text.length} characters (limit ${L.textChars})` };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `not JSON: ${(err as Error).message}` };
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    return {
      ok: false,
      reason: `a message must be a JSON object, got ${v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v}`,
    };
  const op = (v as { op?: unknown }).op;
  if (typeof op !== 'string')
    return {
      ok: false,
      reason: `op: must be a string, got ${op === undefined ? 'nothing' : JSON.stringify(op)?.slice(0, 40)}`,
    };
  if (IGNORED_OPS.includes(op)) return { ok: true, ignored: true };
  const schema = (USED as Record<string, z.ZodType<FoxgloveServerTextMessage>>)[op];
  if (!schema) return { ok: false, reason: `op: unknown op ${JSON.stringify(op.slice(0, 40))}` };
  const r = schema.safeParse(v);
  if (!r.success) return { ok: false, reason: `${op} ${firstIssue(r.error)}` };
  if (r.data.op === 'advertise' && r.data.channels.some((c) => c.schema.length > L.schemaChars)) {
    const refusedChannels = r.data.channels
      .filter((c) => c.schema.length > L.schemaChars)
      .map((c) => ({
        id: c.id,
        topic: c.topic,
        reason: `${c.topic}: advertised with a schema of ${c.schema.length.toLocaleString('en-US')} characters; the limit is ${L.schemaChars.toLocaleString('en-US')}`,
      }));
    const channels = r.data.channels.filter((c) => c.schema.length <= L.schemaChars);
    return { ok: true, ignored: false, value: { ...r.data, channels }, refusedChannels };
  }
  return { ok: true, ignored: false, value: r.data };
}

/** Binary opcodes of foxglove.websocket.v1 the console reads, with their minimal lengths. */
const BINARY_MIN_BYTES: Record<number, number> = { 1: 1 + 4 + 8, 2: 1 + 8 };
const BINARY_IGNORED: readonly number[] = [3, 4];

/** Checks one binary frame from the server: a known opcode and a header that is all there. */
export function checkServerBinary(bytes: Uint8Array): ServerFrameCheck {
  if (bytes.byteLength === 0) return { ok: false, reason: 'empty binary message' };
  const op = bytes[0];
  if (BINARY_IGNORED.includes(op)) return { ok: true, ignored: true };
  const min = BINARY_MIN_BYTES[op];
  if (min === undefined) return { ok: false, reason: `unknown binary opcode 0x${op.toString(16)}` };
  if (bytes.byteLength < min)
    return { ok: false, reason: `binary opcode ${op} needs at least ${min} bytes, got ${bytes.byteLength}` };
  return { ok: true, ignored: false };
}
