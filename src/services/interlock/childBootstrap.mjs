// Entry of the interlock's own processes — the console's keeper (interlockKeeper.ts) and the
// emulated box (interlockEmulatorChild.ts): their code is TypeScript, so the module named by
// argv[2] is loaded here, from its prebuilt bundle or through tsx (../entries/entryBundles.mjs),
// as simWorkerBootstrap.mjs does for worker threads.
import process from 'node:process';
import { importEntry } from '../entries/entryBundles.mjs';

await importEntry(process.argv[2]);
