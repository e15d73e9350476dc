import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

/** Where the reader's kubeconfig comes from: one file (or a KUBECONFIG-style list, merged), a string, or the pod. */
export interface KubeconfigSource {
  /** A kubeconfig file, or several merged as kubectl merges KUBECONFIG (the first file wins on conflicts). */
  file?: string | readonly string[];
  /** A kubeconfig document as YAML text (for example from Secrets Manager). */
  yaml?: string;
  /** The pod's service account (KUBERNETES_SERVICE_HOST/PORT and the mounted token). */
  inCluster?: boolean;
}

export class KubeconfigError extends Error {
  override readonly name = 'KubeconfigError';
}

export interface LoadedKubeconfig {
  kc: KubeConfig;
  context: string;
  /** The API server URL without trailing slash. */
  server: string;
  /** The server URL as safe to print: no userinfo. */
  displayServer: string;
}

function describeSource(source: KubeconfigSource): string {
  if (source.file !== undefined) return `kubeconfig ${[source.file].flat().join(delimiter)}`;
  if (source.yaml !== undefined) return 'the kubeconfig text';
  return 'the in-cluster service account';
}

export function loadKubeconfig(source: KubeconfigSource, context?: string): LoadedKubeconfig {
  const given = [source.file !== undefined, source.yaml !== undefined, source.inCluster === true].filter(Boolean);
  if (given.length !== 1) {
    throw new KubeconfigError('give exactly one kubeconfig source: a file, YAML text, or in-cluster');
  }
  const kc = new KubeConfig();
  const where = describeSource(source);
  try {
    if (source.file !== undefined) loadFiles(kc, [source.file].flat());
    else if (source.yaml !== undefined) kc.loadFromString(source.yaml);
    else {
      if (!process.env.KUBERNETES_SERVICE_HOST || !process.env.KUBERNETES_SERVICE_PORT) {
        throw new KubeconfigError('not running in a cluster: KUBERNETES_SERVICE_HOST/PORT are not set');
      }
      kc.loadFromCluster();
    }
  } catch (error) {
    if (error instanceof KubeconfigError) throw error;
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new KubeconfigError(`cannot load ${where}: ${reason}`, { cause: error });
  }
  if (context !== undefined) {
    if (!kc.getContextObject(context)) {
      const known = kc.getContexts().map((c) => c.name);
      throw new KubeconfigError(
        `context '${context}' is not in ${where}; contexts: ${known.length > 0 ? known.join(', ') : '(none)'}`,
      );
    }
    kc.setCurrentContext(context);
  }
  const current = kc.getCurrentContext();
  if (!current || !kc.getContextObject(current)) {
    throw new KubeconfigError(`${where} has no current context; pass a context`);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster?.server) {
    throw new KubeconfigError(`context '${current}' in ${where} names no cluster with a server URL`);
  }
  let url: URL;
  try {
    url = new URL(cluster.server);
  } catch (error) {
    throw new KubeconfigError(`cluster '${cluster.name}' has an invalid server URL`, { cause: error });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new KubeconfigError(`cluster '${cluster.name}' server must be http(s), got ${url.protocol}`);
  }
  if (url.protocol === 'http:' && !cluster.skipTLSVerify) {
    throw new KubeconfigError(
      `cluster '${cluster.name}' uses plain http; the client only allows that with insecure-skip-tls-verify: true`,
    );
  }
  const server = cluster.server.replace(/\/+$/, '');
  url.username = '';
  url.password = '';
  return { kc, context: current, server, displayServer: url.toString().replace(/\/+$/, '') };
}

/** kubectl's merge rule: the first file that sets a name (or the current context) wins. */
function loadFiles(kc: KubeConfig, files: readonly string[]): void {
  const [first, ...rest] = files;
  if (first === undefined) throw new KubeconfigError('the kubeconfig file list is empty');
  kc.loadFromFile(first);
  for (const file of rest) {
    const next = new KubeConfig();
    next.loadFromFile(file);
    const has = <T extends { name: string }>(list: readonly T[], name: string) => list.some((x) => x.name === name);
    for (const c of next.getClusters()) if (!has(kc.getClusters(), c.name)) kc.addCluster(c);
    for (const u of next.getUsers()) if (!has(kc.getUsers(), u.name)) kc.addUser(u);
    for (const c of next.getContexts()) if (!has(kc.getContexts(), c.name)) kc.addContext(c);
    if (!kc.getCurrentContext() && next.getCurrentContext()) kc.setCurrentContext(next.getCurrentContext());
  }
}

/**
 * kubectl's lookup order for a command line: an explicit file, then $KUBECONFIG (a path list), then
 * ~/.kube/config, then the pod's service account.
 */
export function resolveKubeconfigSource(
  explicitFile: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): KubeconfigSource {
  if (explicitFile !== undefined) {
    if (!existsSync(explicitFile)) throw new KubeconfigError(`kubeconfig file ${explicitFile} does not exist`);
    return { file: explicitFile };
  }
  const fromEnv = (env.KUBECONFIG ?? '').split(delimiter).filter((p) => p !== '');
  if (fromEnv.length > 0) {
    const present = fromEnv.filter((p) => existsSync(p));
    if (present.length === 0) throw new KubeconfigError(`no file in KUBECONFIG exists (${fromEnv.join(delimiter)})`);
    return { file: present.length === 1 ? (present[0] as string) : present };
  }
  const home = env.HOME ?? env.USERPROFILE;
  if (home) {
    const defaultFile = join(home, '.kube', 'config');
    if (existsSync(defaultFile)) return { file: defaultFile };
  }
  if (env.KUBERNETES_SERVICE_HOST) return { inCluster: true };
  throw new KubeconfigError('no kubeconfig: pass --kubeconfig FILE or set KUBECONFIG');
}
