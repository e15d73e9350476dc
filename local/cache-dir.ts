import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultSnapshotCacheDir } from '../src/cluster/snapshot-cache.js';

/**
 * Where the local stack keeps what it can recompute (the `npm start` bundle, validated state machine definitions,
 * parsed snapshots): beside the packages, so a fresh install starts clean and nothing lands in the working tree.
 * Parsed snapshots follow `$XDG_CACHE_HOME` when it is set, as the command line's do.
 */
const cacheDir = fileURLToPath(new URL('../node_modules/.cache/calmops/', import.meta.url));

export const localCache = {
  /** Hashes of state machine definitions that passed validation (local/stepfunctions/validated-file.ts). */
  validatedDefinitions: join(cacheDir, 'validated-definitions.json'),
  /** Parsed snapshots by content, shared with the command line (src/cluster/snapshot-cache.ts). */
  parsedSnapshots: defaultSnapshotCacheDir(),
} as const;
