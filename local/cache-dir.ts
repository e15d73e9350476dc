import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where the local stack keeps what it can recompute (the `npm start` bundle, validated state machine definitions,
 * parsed snapshots): beside the packages, so a fresh install starts clean and nothing lands in the working tree.
 */
const cacheDir = fileURLToPath(new URL('../node_modules/.cache/calmops/', import.meta.url));

export const localCache = {
  /** Hashes of state machine definitions that passed validation (local/stepfunctions/validated-file.ts). */
  validatedDefinitions: join(cacheDir, 'validated-definitions.json'),
  /** Parsed snapshots by content (snapshot-cache.ts). */
  parsedSnapshots: join(cacheDir, 'snapshots'),
} as const;
