// Safety gate (DESIGN §6): a pure state machine deciding whether a motion command may be sent to
// the real robot, and what to send at once when something trips. See docs/SAFETY_GATE.md.
export * from './safetyTypes';
export * from './safetyConditions';
export * from './safetyGate';
