import type { KubeObject } from '../../cluster/types.js';
import type { AnalyzerContext } from '../analyze/analyzer.js';
import type { ContainerView } from './pods.js';

export interface ConfigSource {
  /** ConfigMap holding the value; undefined when the value is written in the pod spec itself. */
  configMap?: string;
  key?: string;
  /** How the container consumes it: `env DB_HOST`, `envFrom`, `volume config → /etc/app`, `args`. */
  via: string;
}

/** The ConfigMap of that name in the namespace, when it was read. */
export function configMapNamed(
  ctx: AnalyzerContext,
  namespace: string,
  name: string | undefined,
): KubeObject | undefined {
  if (name === undefined) return undefined;
  return ctx
    .objects('configmaps')
    .find((m) => m.metadata.name === name && (m.metadata.namespace ?? namespace) === namespace);
}

/** A ConfigMap's `data`, empty when it has none or was not read. */
export function configMapData(cm: KubeObject | undefined): Record<string, string> {
  return (cm?.['data'] as Record<string, string> | undefined) ?? {};
}

/**
 * Where in a container's configuration a value comes from: its env, env from ConfigMaps (by key or whole),
 * ConfigMap volumes it mounts, or its command line. Secrets are never read, so values held there stay unknown.
 */
export function configSourcesOf(
  ctx: AnalyzerContext,
  pod: KubeObject,
  c: ContainerView,
  value: string,
): ConfigSource[] {
  if (value === '') return [];
  const namespace = pod.metadata.namespace ?? ctx.namespace;
  const configMap = (name: string | undefined) => configMapNamed(ctx, namespace, name);
  const holds = (text: unknown) => typeof text === 'string' && text.includes(value);
  const out: ConfigSource[] = [];
  const env: { name?: string; value?: string; valueFrom?: { configMapKeyRef?: { name?: string; key?: string } } }[] =
    Array.isArray(c.spec?.env) ? c.spec.env : [];
  for (const e of env) {
    if (holds(e.value)) out.push({ via: `env ${e.name}` });
    const r = e.valueFrom?.configMapKeyRef;
    if (r?.key !== undefined && holds(configMapData(configMap(r.name))[r.key])) {
      out.push({ configMap: r.name, key: r.key, via: `env ${e.name}` });
    }
  }
  const envFrom: { configMapRef?: { name?: string }; prefix?: string }[] = Array.isArray(c.spec?.envFrom)
    ? c.spec.envFrom
    : [];
  for (const e of envFrom) {
    const cm = configMap(e.configMapRef?.name);
    for (const [key, v] of Object.entries(configMapData(cm))) {
      if (holds(v)) out.push({ configMap: cm?.metadata.name, key, via: `envFrom (env ${e.prefix ?? ''}${key})` });
    }
  }
  const volumes: { name?: string; configMap?: { name?: string } }[] = Array.isArray(pod.spec?.volumes)
    ? pod.spec.volumes
    : [];
  const mounts: { name?: string; mountPath?: string }[] = Array.isArray(c.spec?.volumeMounts)
    ? c.spec.volumeMounts
    : [];
  for (const m of mounts) {
    const cm = configMap(volumes.find((v) => v.name === m.name)?.configMap?.name);
    for (const [key, v] of Object.entries(configMapData(cm))) {
      if (holds(v)) out.push({ configMap: cm?.metadata.name, key, via: `volume ${m.name} → ${m.mountPath}/${key}` });
    }
  }
  const argv = [
    ...(Array.isArray(c.spec?.command) ? c.spec.command : []),
    ...(Array.isArray(c.spec?.args) ? c.spec.args : []),
  ];
  if (argv.some(holds)) out.push({ via: 'command line' });
  return out;
}
