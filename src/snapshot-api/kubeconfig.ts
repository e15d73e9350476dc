import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { writeYaml } from '../yaml-text.js';

/**
 * A kubeconfig for the snapshot API server. It carries no credentials: the server has no authentication and only
 * listens on loopback. `insecure-skip-tls-verify` is set because @kubernetes/client-node refuses a plain-http
 * cluster entry without it; kubectl ignores it for http.
 */

export interface KubeconfigOptions {
  /** The server URL, e.g. `http://127.0.0.1:38017`. */
  server: string;
  /** Name of the cluster, user and context entries; `calmops-snapshot` by default. */
  context?: string;
  /** Default namespace of the context. */
  namespace?: string;
}

export function kubeconfigYaml(options: KubeconfigOptions): string {
  const name = options.context ?? 'calmops-snapshot';
  return writeYaml({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server: options.server, 'insecure-skip-tls-verify': true } }],
    users: [{ name, user: {} }],
    contexts: [
      {
        name,
        context: { cluster: name, user: name, ...(options.namespace ? { namespace: options.namespace } : {}) },
      },
    ],
    'current-context': name,
    preferences: {},
  });
}

/** Write the kubeconfig (creating its folder) with owner-only permissions, as kubectl does. */
export async function writeKubeconfig(file: string, options: KubeconfigOptions): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, kubeconfigYaml(options), { encoding: 'utf8', mode: 0o600 });
}
