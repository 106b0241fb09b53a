// Metric contract mb-metrics/1 (DESIGN §4): contract object, streaming and batch reducers,
// clip-pair evaluation and aggregation into the gap report. See docs/METRICS.md.
export * from './metricContract';
export * from './readings';
export * from './metricLayout';
export * from './percentile';
export { headingOf, relativeAngle, wrapAngle } from './episodeAccumulator';
export * from './batchReducer';
export * from './streamingReducer';
export * from './clipPairMetrics';
export * from './aggregate';
export * from './liveTracking';
export * from './frameSeries';
