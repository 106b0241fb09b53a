// Calibration capture (DESIGN §3 CalibrationRecord; docs/CALIBRATION.md).
export * from './attitude';
export * from './stillness';
export * from './capture';
export * from './simStart';
export * from './residuals';
