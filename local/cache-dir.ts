import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where the local stack keeps what it can recompute (the `npm start` bundle, validated state machine definitions,
 * parsed snapshots): beside the packages, so a fresh install starts clean and nothing lands in the working tree.
 */
export function localCacheDir(...parts: string[]): string {
  return join(fileURLToPath(new URL('../node_modules/.cache/calmops/', import.meta.url)), ...parts);
}
