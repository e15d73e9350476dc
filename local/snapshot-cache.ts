// `npm start` keeps the demo cluster's parsed snapshot where the command line keeps its own (see local/cache-dir.ts).
export { snapshotCacheIn } from '../src/cluster/snapshot-cache.js';
