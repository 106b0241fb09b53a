/**
 * One 50 Hz live reading of the running real trial (from the live mb-metrics/1 reducer): what the
 * trial driver reports and what the console's live trial store holds.
 */
export interface LiveReading {
  frame: number;
  timeS: number;
  mpjpeLMm: number | null;
  jointRmseRad: number | null;
  failed: boolean;
  failure: string | null;
}
