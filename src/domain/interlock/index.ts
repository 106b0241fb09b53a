// Serial safety interlock (DESIGN §5.2, docs/INTERLOCK.md): line protocol, the console-side
// monitor state machine and the box's own logic, all pure.
export * from './interlockProtocol';
export * from './interlockMonitor';
export * from './interlockDevice';
export { SampleRing } from './sampleRing';
export * from './consoleWatchdog';
export * from './keeperView';
