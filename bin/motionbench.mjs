#!/usr/bin/env node
// Entry point of the `motionbench` command. The CLI is TypeScript run through tsx's loader, so
// `npx motionbench …` works straight after `npm install` with no build step.
import process from 'node:process';
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
