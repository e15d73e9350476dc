import { join } from 'node:path';
import { loadSnapshotFiles } from '../../src/cluster/snapshot.js';
import { type SnapshotServer, type SnapshotServerOptions, startSnapshotServer } from '../../src/snapshot-api/server.js';

export const DEMO_SNAPSHOT = join(import.meta.dirname, '..', 'fixtures', 'kube', 'demo.yaml');

/** The demo snapshot served on an ephemeral loopback port. */
export async function startDemoServer(options: Omit<SnapshotServerOptions, 'objects'> = {}): Promise<SnapshotServer> {
  const { objects, logs } = await loadSnapshotFiles(DEMO_SNAPSHOT);
  return startSnapshotServer({ objects, logs, ...options });
}
