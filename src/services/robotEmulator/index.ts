export * from './robotEmulatorCore';
export * from './robotEmulator';
