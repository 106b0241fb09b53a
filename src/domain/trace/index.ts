// Trace model (DESIGN §3 Trace): ids, parent-trace identity, record types. See docs/TRACE_STORE.md.
export * from './canonicalJson';
export * from './ids';
export * from './parentTrace';
export * from './records';
