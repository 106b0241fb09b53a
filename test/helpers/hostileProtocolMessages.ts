// Hostile protocol messages a Foxglove WebSocket server can send a client: the
// ones the attack used, and their kind — wrong types where arrays are read, nulls, missing ops,
// out-of-range ids, non-objects, broken JSON. Each must be refused before it reaches
// @foxglove/ws-protocol's dispatch, counted on the link, and never crash the console. The next
// attack run starts from this list.

export interface HostileMessage {
  /** What it attacks. */
  what: string;
  /** Sent verbatim as a WebSocket text frame. */
  text: string;
}

export const HOSTILE_FOXGLOVE_SERVER_MESSAGES: readonly HostileMessage[] = [
  {
    what: 'advertise with channels null (the attack: "chs is not iterable")',
    text: '{"op":"advertise","channels":null}',
  },
  { what: 'unadvertise with channelIds null', text: '{"op":"unadvertise","channelIds":null}' },
  { what: 'advertise with a null channel', text: '{"op":"advertise","channels":[null]}' },
  {
    what: 'advertise with a channel without topic',
    text: '{"op":"advertise","channels":[{"id":7,"encoding":"json","schemaName":"x","schema":""}]}',
  },
  {
    what: 'advertise with a negative channel id',
    text: '{"op":"advertise","channels":[{"id":-1,"topic":"/g1/lowstate","encoding":"json","schemaName":"g1-bridge/1/LowState","schema":""}]}',
  },
  {
    what: 'advertise with a non-numeric id',
    text: '{"op":"advertise","channels":[{"id":"1","topic":"/g1/lowstate","encoding":"json","schemaName":"g1-bridge/1/LowState","schema":""}]}',
  },
  { what: 'unadvertise with string ids', text: '{"op":"unadvertise","channelIds":["a"]}' },
  { what: 'serverInfo without capabilities', text: '{"op":"serverInfo","name":"x"}' },
  {
    what: 'serverInfo with metadata values that are not strings',
    text: '{"op":"serverInfo","name":"x","capabilities":[],"metadata":{"g1_bridge_contract":5}}',
  },
  { what: 'status with a level out of range', text: '{"op":"status","level":7,"message":"x"}' },
  { what: 'status without message', text: '{"op":"status","level":0}' },
  { what: 'removeStatus with an object for ids', text: '{"op":"removeStatus","statusIds":{}}' },
  { what: 'the JSON literal null', text: 'null' },
  { what: 'a JSON array', text: '[1,2,3]' },
  { what: 'a JSON string', text: '"advertise"' },
  { what: 'no op', text: '{"channels":[]}' },
  { what: 'a numeric op', text: '{"op":1}' },
  { what: 'an unknown op', text: '{"op":"explode"}' },
  { what: 'broken JSON', text: '{"op":"advertise","channels":[' },
  { what: 'an op that is an object', text: '{"op":{"toString":1}}' },
];
