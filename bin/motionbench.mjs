#!/usr/bin/env node
// Entry point of the `motionbench` command. The CLI is TypeScript: it runs from its prebuilt
// bundle while that matches the sources, else through tsx's loader, so `npx motionbench …` works
// straight after `npm install` and after any edit (src/services/entries/entryBundles.mjs).
import process from 'node:process';
import { URL } from 'node:url';
import { importEntry } from '../src/services/entries/entryBundles.mjs';

const { main } = await importEntry(new URL('../src/cli/main.ts', import.meta.url));
process.exitCode = await main(process.argv.slice(2));
