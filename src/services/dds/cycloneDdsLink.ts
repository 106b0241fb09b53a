// The G1's DDS link through Eclipse Cyclone DDS (libddsc), via the Node-API addon in native/dds.
// LowCmd_/LowState_ samples cross as the packed C struct bytes of src/domain/robotLink/unitreeHgWire.ts;
// unitree_api Request_/Response_ samples as the objects of src/domain/robotLink/unitreeApiWire.ts
// (text and binary bounded by the addon: longer is refused on write, dropped and counted on
// receipt). DDS threads take
// them and queue them to this thread (bounded; overflow is dropped and counted), so a busy event
// loop delays delivery but never stalls DDS. Discovery, serialization and transport are Cyclone's.

import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { ApiRequest, ApiResponse } from '../../domain/robotLink/unitreeApiWire';
import { LOW_CMD_BYTES, LOW_CMD_TOPIC, LOW_STATE_BYTES, LOW_STATE_TOPIC } from '../../domain/robotLink/unitreeHgWire';

/** Where `npm run build:dds` (node-gyp in native/dds) puts the addon. */
export const DDS_ADDON_PATH = fileURLToPath(new URL('../../../native/dds/build/Release/ddslink.node', import.meta.url));

export const DDS_KIND = { lowCmd: 0, lowState: 1, apiRequest: 2, apiResponse: 3 } as const;
export type DdsKind = (typeof DDS_KIND)[keyof typeof DDS_KIND];
export type DdsStructKind = typeof DDS_KIND.lowCmd | typeof DDS_KIND.lowState;
export type DdsApiKind = typeof DDS_KIND.apiRequest | typeof DDS_KIND.apiResponse;
/** The sample object of an api kind. */
export type ApiSampleOf<K extends DdsApiKind> = K extends typeof DDS_KIND.apiRequest ? ApiRequest : ApiResponse;

interface ReaderHandle {
  readonly __readerHandle: unique symbol;
}

/** The addon's surface (native/dds/ddsLink.c). */
export interface DdsAddon {
  createParticipant(domainId: number, configXml: string): { participant: number; domain: number };
  deleteEntity(handle: number): void;
  createWriter(
    participant: number,
    kind: DdsKind,
    topic: string,
    typeName: string | null,
    withTypeInfo: boolean,
  ): number;
  write(writer: number, kind: DdsStructKind, bytes: Uint8Array): void;
  writeApi(writer: number, kind: DdsApiKind, sample: ApiRequest | ApiResponse): void;
  createReader(
    participant: number,
    kind: DdsKind,
    topic: string,
    typeName: string | null,
    withTypeInfo: boolean,
    onSample: (sample: Buffer | ApiRequest | ApiResponse, receiptNs: bigint, sourceNs: bigint) => void,
  ): ReaderHandle;
  closeReader(reader: ReaderHandle): void;
  readerStats(reader: ReaderHandle): ReaderStats;
  writerMatched(writer: number): number;
  typeInfo(kind: DdsKind): { typeName: string; size: number; typeInformation: Buffer };
}

export interface ReaderStats {
  received: number;
  /** Samples that found the delivery queue full. */
  dropped: number;
  /** Request_/Response_ samples whose text or binary exceeded the addon's bounds. */
  oversize: number;
  matched: number;
}

let cached: DdsAddon | undefined;

/** The addon, or one clear line saying how to get it. */
export function loadDdsAddon(): DdsAddon {
  if (cached) return cached;
  if (!existsSync(DDS_ADDON_PATH))
    throw new Error(
      `Cyclone DDS link not built (${DDS_ADDON_PATH} missing): install cyclonedds-dev and cyclonedds-tools 0.10.x, then run npm run build:dds`,
    );
  cached = createRequire(import.meta.url)(DDS_ADDON_PATH) as DdsAddon;
  return cached;
}

const INTERFACE_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * Cyclone configuration for one network interface. `lo` gives the loopback setup tests use:
 * no multicast, discovery by unicast to 127.0.0.1, participant indices allocated per process.
 */
export function cycloneConfigXml(interfaceName: string): string {
  if (!INTERFACE_NAME.test(interfaceName))
    throw new Error(`dds: interface name "${interfaceName}" is not a plain name`);
  const general = `<General><Interfaces><NetworkInterface name="${interfaceName}"/></Interfaces>`;
  if (interfaceName === 'lo')
    return (
      `<CycloneDDS><Domain Id="any">${general}<AllowMulticast>false</AllowMulticast></General>` +
      `<Discovery><Peers><Peer address="127.0.0.1"/></Peers><ParticipantIndex>auto</ParticipantIndex>` +
      `</Discovery></Domain></CycloneDDS>`
    );
  return `<CycloneDDS><Domain Id="any">${general}</General></Domain></CycloneDDS>`;
}

export interface EndpointOptions {
  topic?: string;
  /** Another DDS type name than Unitree's (negative controls). */
  typeName?: string;
  /** Send XTypes type information (default true, as idlc-generated code and unitree_sdk2 do). */
  withTypeInformation?: boolean;
}

export interface DdsSample {
  bytes: Buffer;
  /** CLOCK_MONOTONIC at DDS receipt, ns: comparable with process.hrtime.bigint(). */
  receiptNs: bigint;
  /** The writer's source timestamp, ns since the Unix epoch. */
  sourceNs: bigint;
}

export class DdsWriter {
  constructor(
    private readonly addon: DdsAddon,
    readonly handle: number,
    readonly kind: DdsStructKind,
  ) {}

  write(bytes: Uint8Array): void {
    this.addon.write(this.handle, this.kind, bytes);
  }

  matchedReaders(): number {
    return this.addon.writerMatched(this.handle);
  }
}

/** A writer of unitree_api Request_ or Response_. */
export class DdsApiWriter<K extends DdsApiKind> {
  constructor(
    private readonly addon: DdsAddon,
    readonly handle: number,
    readonly kind: K,
  ) {}

  /** Throws a TypeError naming the field on a value the type cannot carry or the bounds refuse. */
  write(sample: ApiSampleOf<K>): void {
    this.addon.writeApi(this.handle, this.kind, sample);
  }

  matchedReaders(): number {
    return this.addon.writerMatched(this.handle);
  }
}

export interface DdsApiSample<T> {
  sample: T;
  /** CLOCK_MONOTONIC at DDS receipt, ns. */
  receiptNs: bigint;
}

export class DdsReader {
  private closed = false;
  constructor(
    private readonly addon: DdsAddon,
    private readonly handle: ReaderHandle,
  ) {}

  stats(): ReaderStats {
    return this.addon.readerStats(this.handle);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.addon.closeReader(this.handle);
  }
}

/** One DomainParticipant. The participant that created the domain in this process closes it: close it last. */
export class DdsParticipant {
  private readonly readers: DdsReader[] = [];
  private closed = false;

  private constructor(
    private readonly addon: DdsAddon,
    readonly handle: number,
    private readonly domainHandle: number,
  ) {}

  static open(domainId: number, configXml: string, addon: DdsAddon = loadDdsAddon()): DdsParticipant {
    if (!Number.isInteger(domainId) || domainId < 0 || domainId > 232)
      throw new Error(`dds: domain id ${domainId} is not in 0..232`);
    const { participant, domain } = addon.createParticipant(domainId, configXml);
    return new DdsParticipant(addon, participant, domain);
  }

  writer(kind: DdsStructKind, options: EndpointOptions = {}): DdsWriter {
    const topic = options.topic ?? (kind === DDS_KIND.lowCmd ? LOW_CMD_TOPIC : LOW_STATE_TOPIC);
    return new DdsWriter(this.addon, this.writerHandle(kind, topic, options), kind);
  }

  private writerHandle(kind: DdsKind, topic: string, options: Omit<EndpointOptions, 'topic'>): number {
    return this.addon.createWriter(
      this.handle,
      kind,
      topic,
      options.typeName ?? null,
      options.withTypeInformation ?? true,
    );
  }

  reader(kind: DdsStructKind, onSample: (sample: DdsSample) => void, options: EndpointOptions = {}): DdsReader {
    const topic = options.topic ?? (kind === DDS_KIND.lowCmd ? LOW_CMD_TOPIC : LOW_STATE_TOPIC);
    const size = kind === DDS_KIND.lowCmd ? LOW_CMD_BYTES : LOW_STATE_BYTES;
    const h = this.addon.createReader(
      this.handle,
      kind,
      topic,
      options.typeName ?? null,
      options.withTypeInformation ?? true,
      (bytes, receiptNs, sourceNs) => {
        if (Buffer.isBuffer(bytes) && bytes.length === size) onSample({ bytes, receiptNs, sourceNs });
      },
    );
    const reader = new DdsReader(this.addon, h);
    this.readers.push(reader);
    return reader;
  }

  /** A Request_/Response_ writer on `topic` (a service's topics: unitreeApiWire.serviceTopics). */
  apiWriter<K extends DdsApiKind>(
    kind: K,
    topic: string,
    options: Omit<EndpointOptions, 'topic'> = {},
  ): DdsApiWriter<K> {
    return new DdsApiWriter(this.addon, this.writerHandle(kind, topic, options), kind);
  }

  /** A Request_/Response_ reader on `topic`; samples arrive on this thread. */
  apiReader<K extends DdsApiKind>(
    kind: K,
    topic: string,
    onSample: (s: DdsApiSample<ApiSampleOf<K>>) => void,
    options: Omit<EndpointOptions, 'topic'> = {},
  ): DdsReader {
    const h = this.addon.createReader(
      this.handle,
      kind,
      topic,
      options.typeName ?? null,
      options.withTypeInformation ?? true,
      (sample, receiptNs) => {
        if (!Buffer.isBuffer(sample)) onSample({ sample: sample as ApiSampleOf<K>, receiptNs });
      },
    );
    const reader = new DdsReader(this.addon, h);
    this.readers.push(reader);
    return reader;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const r of this.readers) r.close();
    this.addon.deleteEntity(this.handle);
    if (this.domainHandle > 0) this.addon.deleteEntity(this.domainHandle);
  }
}
