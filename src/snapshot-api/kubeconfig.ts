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

/** The kubeconfig itself; both of its texts below are written from it. */
export function kubeconfigDocument(options: KubeconfigOptions): Record<string, unknown> {
  const name = options.context ?? 'calmops-snapshot';
  return {
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
  };
}

/** The kubeconfig as people read it, for a file. */
export function kubeconfigYaml(options: KubeconfigOptions): string {
  return writeYaml(kubeconfigDocument(options));
}

/**
 * The kubeconfig as JSON, which is YAML too, so every kubeconfig loader reads it: for a client in the same process,
 * which then need not write YAML just to read it back.
 */
export function kubeconfigJson(options: KubeconfigOptions): string {
  return JSON.stringify(kubeconfigDocument(options));
}

/** Write the kubeconfig (creating its folder) with owner-only permissions, as kubectl does. */
export async function writeKubeconfig(file: string, options: KubeconfigOptions): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, kubeconfigYaml(options), { encoding: 'utf8', mode: 0o600 });
}
