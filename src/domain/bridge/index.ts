// `g1-bridge/1`: topics, message types, JSON Schemas, validators and codecs (docs/G1_BRIDGE.md).
export * from './g1BridgeContract';
export * from './g1BridgeSchemas';
export * from './g1BridgeValidate';
export * from './g1BridgeEncode';
