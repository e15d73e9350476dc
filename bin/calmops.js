#!/usr/bin/env node
// The installed `calmops` command: calmops ships TypeScript sources and runs them through tsx's loader.
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../src/cli/main.ts');
await runCli(process.argv.slice(2));
