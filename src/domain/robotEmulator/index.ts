export * from './robotEmulatorProfile';
export * from './actuatorDelayLine';
export * from './sensorNoise';
export * from './emulatorControl';
export * from './standingClip';
export * from './sensorModel';
