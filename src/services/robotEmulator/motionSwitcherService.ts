// The emulated G1's motion switcher service (the server end of unitree_sdk2's MotionSwitcherClient
// over real Cyclone DDS): reads unitree_api Request_ on `rt/api/motion_switcher/request` and answers
// on `rt/api/motion_switcher/response` with the request's identity (id and api_id) copied, as
// unitree_sdk2py's Server does. CheckMode (1001) answers {"name": <mode>, "form": <form>}; an empty
// name is the robot with no high-level mode (motors free for low-level control). Any other api id
// is answered with status RPC_ERR_SERVER_API_NOT_IMPL: this emulator cannot select or release modes.

import {
  checkModeResponse,
  MOTION_SWITCHER_API_ID,
  MOTION_SWITCHER_TOPICS,
  RPC_ERR_SERVER_API_NOT_IMPL,
  type ApiRequest,
  type MotionMode,
} from '../../domain/robotLink/unitreeApiWire';
import {
  DDS_KIND,
  type DdsApiWriter,
  type DdsParticipant,
  type DdsReader,
  type EndpointOptions,
} from '../dds/cycloneDdsLink';

export interface MotionSwitcherServiceOptions {
  mode: MotionMode;
  /**
   * The request reader's DDS type name and type information (negative controls: another name without
   * type information never matches Unitree's Request_; Cyclone matches by type identifiers when both
   * sides send them, docs/DDS_LINK.md).
   */
  requestEndpoint?: Omit<EndpointOptions, 'topic'>;
  /** Answer CheckMode with this identity id instead of the request's (negative controls). */
  answerIdOffset?: bigint;
  log?: (line: string) => void;
}

export class MotionSwitcherService {
  private readonly writer: DdsApiWriter<typeof DDS_KIND.apiResponse>;
  private readonly reader: DdsReader;
  private answered = 0;

  constructor(
    participant: DdsParticipant,
    private readonly options: MotionSwitcherServiceOptions,
  ) {
    this.writer = participant.apiWriter(DDS_KIND.apiResponse, MOTION_SWITCHER_TOPICS.response);
    this.reader = participant.apiReader(
      DDS_KIND.apiRequest,
      MOTION_SWITCHER_TOPICS.request,
      ({ sample }) => this.onRequest(sample),
      options.requestEndpoint,
    );
  }

  private onRequest(r: ApiRequest): void {
    if (r.noreply) return;
    const offset = this.options.answerIdOffset ?? 0n;
    if (r.apiId === BigInt(MOTION_SWITCHER_API_ID.checkMode)) {
      const resp = checkModeResponse(r, this.options.mode);
      this.writer.write({ ...resp, identityId: resp.identityId + offset });
    } else {
      this.writer.write({
        identityId: r.identityId + offset,
        apiId: r.apiId,
        code: RPC_ERR_SERVER_API_NOT_IMPL,
        data: '',
        binary: new Uint8Array(0),
      });
      this.options.log?.(`emulate-robot --dds: motion switcher: api ${r.apiId} not implemented here`);
    }
    this.answered++;
  }

  /** Requests answered so far. */
  answeredCount(): number {
    return this.answered;
  }

  close(): void {
    this.reader.close();
  }
}
