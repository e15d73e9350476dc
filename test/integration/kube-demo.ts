import { join } from 'node:path';
import { type SnapshotServer, type SnapshotServerOptions, startSnapshotServer } from '../../local/kube/server.js';
import { loadSnapshotFiles } from '../../src/cluster/snapshot.js';

export const DEMO_SNAPSHOT = join(import.meta.dirname, '../fixtures/kube/demo.yaml');

/** The demo snapshot served on an ephemeral loopback port. */
export async function startDemoServer(options: Omit<SnapshotServerOptions, 'objects'> = {}): Promise<SnapshotServer> {
  const { objects, logs } = await loadSnapshotFiles(DEMO_SNAPSHOT);
  return startSnapshotServer({ objects, logs, ...options });
}
