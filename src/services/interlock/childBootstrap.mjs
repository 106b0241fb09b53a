// Entry of the interlock's own processes — the console's keeper (interlockKeeper.ts) and the
// emulated box (interlockEmulatorChild.ts): their code is TypeScript, so register tsx here before
// importing the module named by argv[2] (as simWorkerBootstrap.mjs does for worker threads).
import process from 'node:process';
import { register } from 'tsx/esm/api';

register();
await import(process.argv[2]);
