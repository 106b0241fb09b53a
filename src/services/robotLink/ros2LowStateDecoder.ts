import { MessageReader } from '@foxglove/rosmsg2-serialization';
import { scanRos2DefinitionText } from '../../domain/robotLink/ros2DefinitionBounds';
import { UNITREE_LOWSTATE_SCHEMA, UnitreeDefinitionError } from '../../domain/robotLink/unitreeLowState';
import { ros2DefinitionChecker, type Ros2DefinitionChecker } from './ros2DefinitionOffThread';

// The CDR decoder of a ROS 2 `/lowstate` channel, built from the message definition the server
// advertises (foxglove_bridge: `encoding: "cdr"`, `schemaEncoding: "ros2msg"`, `schemaName:
// "unitree_hg/msg/LowState"`, `schema`: the LowState.msg text, then for each dependency a line of
// 80 '=' and `MSG: unitree_hg/msg/<Type>` and its text — ros2_foxglove_bridge
// src/message_definition_cache.cpp, delimiter() and get_full_text()). Nothing here knows a byte
// layout: @foxglove/rosmsg parses the text (ROS 2 grammar), the domain checks its bounds
// (src/domain/robotLink/ros2DefinitionBounds.ts) and that it is the unitree_hg definition the
// console maps (src/domain/robotLink/unitreeLowState.ts), and @foxglove/rosmsg2-serialization's
// MessageReader reads each payload (CDR with its 4-byte encapsulation header, as rclcpp serializes
// it and foxglove_bridge forwards it unchanged).
//
// The text comes from the robot, so it is untrusted: its length, line lengths and section count are
// checked here in one linear pass, and the parse and every other check run in a worker thread with
// a deadline and a heap cap (ros2DefinitionOffThread.ts), never on this event loop. A definition
// that passes decodes one payload in at most ROS2_DEFINITION_LIMITS.decodeSteps element reads, and
// a payload shorter than the fewest bytes the definition admits is refused unread.

/** What a channel advertisement says about its messages. */
export interface Ros2ChannelSchema {
  topic: string;
  encoding: string;
  schemaName: string;
  schemaEncoding?: string;
  schema: string;
}

/** True when the channel is a ROS 2 unitree_hg LowState in CDR (what this decoder reads). */
export function isRos2UnitreeLowState(ch: Ros2ChannelSchema): boolean {
  return ch.encoding === 'cdr' && ch.schemaEncoding === 'ros2msg' && ch.schemaName === UNITREE_LOWSTATE_SCHEMA;
}

/** The CDR encapsulation header before a payload's first field. */
const CDR_HEADER_BYTES = 4;

export class Ros2LowStateDecoder {
  private constructor(
    private readonly reader: MessageReader,
    /** The fewest bytes a payload of the definition occupies (header included): shorter ones are not read. */
    readonly minPayloadBytes: number,
  ) {}

  /**
   * A decoder for the channel's advertised definition, checked off this thread. Rejects with
   * UnitreeDefinitionError naming the field when the definition is not unitree_hg's LowState (or
   * does not parse), Ros2DefinitionBoundsError naming the line, field and limit when it is out of
   * bounds, Ros2DefinitionCheckError when the checker itself failed.
   */
  static async fromChannel(
    ch: Ros2ChannelSchema,
    checker: Ros2DefinitionChecker = ros2DefinitionChecker(),
  ): Promise<Ros2LowStateDecoder> {
    if (!isRos2UnitreeLowState(ch))
      throw new UnitreeDefinitionError(
        ch.topic,
        `is ${ch.schemaName} (${ch.encoding}, ${ch.schemaEncoding ?? 'no schema encoding'}); expected ${UNITREE_LOWSTATE_SCHEMA} (cdr, ros2msg)`,
      );
    // Linear, on this thread: an over-long text or line, or too many sections, is refused before a worker sees it.
    scanRos2DefinitionText(ch.schema, ch.schemaName);
    const { definitions, cost } = await checker.check(ch.schemaName, ch.schema);
    return new Ros2LowStateDecoder(new MessageReader(definitions), CDR_HEADER_BYTES + cost.minWireBytes);
  }

  /**
   * One CDR payload → the message object, or why it could not be read (never throws). A payload
   * shorter than the definition's fewest bytes is refused unread, so the reads of a decoding stay
   * within ROS2_DEFINITION_LIMITS.decodeStepsPerByte per byte of the payload.
   */
  decode(data: ArrayBufferView): { ok: true; message: unknown } | { ok: false; reason: string } {
    if (data.byteLength < this.minPayloadBytes)
      return {
        ok: false,
        reason: `a payload of ${data.byteLength} bytes; the advertised definition needs at least ${this.minPayloadBytes}`,
      };
    try {
      const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
      return { ok: true, message: this.reader.readMessage(bytes) };
    } catch (err) {
      return { ok: false, reason: (err as Error)?.message ?? String(err) };
    }
  }
}
