// Entry of a simulator worker thread. The worker's code is TypeScript; worker threads do not
// inherit the tsx loader the main thread runs under (nor does `--import tsx` in a worker's
// execArgv take effect on Node 20), so register it here before importing the worker module.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
