// The two ends of a G1's low-level DDS link, with Unitree's CRC applied: the controller end
// (what a runner uses: LowState_ in, LowCmd_ out) and the robot end (what an emulated G1 uses:
// LowCmd_ in, LowState_ out). Every message written carries its CRC; every message received is
// checked, and one with a wrong CRC is dropped and counted, never handed on.

import {
  decodeLowCmd,
  decodeLowState,
  encodeLowCmd,
  encodeLowState,
  LOW_CMD_BYTES,
  LOW_STATE_BYTES,
  lowCmdCrcValid,
  lowStateCrcValid,
  type LowCmd,
  type LowState,
} from '../../domain/robotLink/unitreeHgWire';
import {
  cycloneConfigXml,
  DDS_KIND,
  DdsParticipant,
  type DdsAddon,
  type DdsReader,
  type DdsWriter,
} from './cycloneDdsLink';

export interface G1DdsOptions {
  /** Network interface name (`lo` for the loopback configuration). */
  interfaceName: string;
  /** DDS domain id; a G1 uses 0. */
  domainId?: number;
  addon?: DdsAddon;
}

export interface Received<T> {
  message: T;
  /** CLOCK_MONOTONIC at DDS receipt, ns (process.hrtime.bigint()'s clock). */
  receiptNs: bigint;
}

export interface LinkCounters {
  received: number;
  crcErrors: number;
  /** Samples DDS took that found the delivery queue full. */
  dropped: number;
  sent: number;
}

abstract class G1DdsEnd<In, Out> {
  /** The DomainParticipant (other endpoints on the same link: the motion switcher's). */
  readonly participant: DdsParticipant;
  private readonly writer: DdsWriter;
  private readonly reader: DdsReader;
  private readonly listeners: ((r: Received<In>) => void)[] = [];
  private readonly outBytes: Uint8Array;
  private receivedCount = 0;
  private crcErrorCount = 0;
  private sentCount = 0;

  protected constructor(
    options: G1DdsOptions,
    inKind: typeof DDS_KIND.lowCmd | typeof DDS_KIND.lowState,
    private readonly check: (bytes: Uint8Array) => boolean,
    private readonly decode: (bytes: Uint8Array) => In,
    private readonly encode: (message: Out, out: Uint8Array) => Uint8Array,
  ) {
    this.participant = DdsParticipant.open(
      options.domainId ?? 0,
      cycloneConfigXml(options.interfaceName),
      options.addon,
    );
    const outKind = inKind === DDS_KIND.lowCmd ? DDS_KIND.lowState : DDS_KIND.lowCmd;
    this.outBytes = new Uint8Array(outKind === DDS_KIND.lowCmd ? LOW_CMD_BYTES : LOW_STATE_BYTES);
    this.writer = this.participant.writer(outKind);
    this.reader = this.participant.reader(inKind, ({ bytes, receiptNs }) => {
      if (!this.check(bytes)) {
        this.crcErrorCount++;
        return;
      }
      this.receivedCount++;
      const received = { message: this.decode(bytes), receiptNs };
      for (const l of this.listeners) l(received);
    });
  }

  /** Called on this thread for every received message whose CRC checks. */
  onMessage(listener: (r: Received<In>) => void): void {
    this.listeners.push(listener);
  }

  /** Encodes with the CRC and writes; the message's own `crc` field is ignored. */
  send(message: Out): void {
    this.writer.write(this.encode(message, this.outBytes));
    this.sentCount++;
  }

  /** Readers on the other side currently matched by our writer. */
  matchedPeers(): number {
    return this.writer.matchedReaders();
  }

  counters(): LinkCounters {
    return {
      received: this.receivedCount,
      crcErrors: this.crcErrorCount,
      dropped: this.reader.stats().dropped,
      sent: this.sentCount,
    };
  }

  close(): void {
    this.participant.close();
  }
}

/** The controller end: LowState_ from `rt/lowstate` in, LowCmd_ to `rt/lowcmd` out. */
export class G1DdsController extends G1DdsEnd<LowState, LowCmd> {
  constructor(options: G1DdsOptions) {
    super(options, DDS_KIND.lowState, lowStateCrcValid, decodeLowState, encodeLowCmd);
  }
}

/** The robot end (an emulated G1): LowCmd_ from `rt/lowcmd` in, LowState_ to `rt/lowstate` out. */
export class G1DdsRobot extends G1DdsEnd<LowCmd, LowState> {
  constructor(options: G1DdsOptions) {
    super(options, DDS_KIND.lowCmd, lowCmdCrcValid, decodeLowCmd, encodeLowState);
  }
}
