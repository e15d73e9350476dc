import { load } from 'js-yaml';
import type { KubeObject } from '../../cluster/types.js';
import type { AnalyzerContext } from '../analyze/analyzer.js';
import { scrubText } from '../scrub.js';
import { configMapData, configMapNamed } from './config-sources.js';
import { clip } from './events.js';
import type { ContainerView } from './pods.js';

/**
 * A program that dies on a document it cannot parse, and the ConfigMap value that is that document. The parser's
 * complaint says which format; the container's ConfigMap volumes and env say which values it reads; parsing those
 * values says which one is broken. The ConfigMap is then what to change, whatever workload suffers from it.
 */

type Format = 'JSON' | 'YAML';

interface ParseComplaint {
  format: Format;
  line: string;
}

/**
 * How parsers word a syntax error in a document, as their own libraries write it: V8's `SyntaxError: … JSON …`,
 * CPython's `json.decoder.JSONDecodeError`, Go's encoding/json (`invalid character 'x' looking for beginning of
 * object key string`, `unexpected end of JSON input`), Jackson's `JsonParseException`, Go's yaml (`yaml: line 4:
 * did not find expected key`), PyYAML's `yaml.scanner.ScannerError`, SnakeYAML's `ScannerException` and js-yaml's
 * `YAMLException`. Type errors on a well-formed document (`yaml: unmarshal errors`) are not syntax and not here.
 */
const COMPLAINTS: ReadonlyArray<{ format: Format; pattern: RegExp }> = [
  { format: 'JSON', pattern: /SyntaxError: .*\bJSON\b/ },
  { format: 'JSON', pattern: /\bJSONDecodeError: / },
  { format: 'JSON', pattern: /invalid character '.{1,4}' (?:looking for|after|in) |unexpected end of JSON input/ },
  { format: 'JSON', pattern: /\bJson(?:Parse|EOF)Exception\b/ },
  { format: 'YAML', pattern: /\byaml: line \d+: (?!.*unmarshal)/ },
  { format: 'YAML', pattern: /\byaml\.(?:scanner|parser|composer)\.\w+Error\b/ },
  { format: 'YAML', pattern: /\borg\.yaml\.snakeyaml\.(?:scanner|parser|composer)\.\w+Exception\b/ },
  { format: 'YAML', pattern: /\bYAMLException: / },
];

/** The first line of a log in which a parser reports a syntax error, and the format it was reading. */
export function parseComplaint(log: string | undefined): ParseComplaint | undefined {
  if (log === undefined) return undefined;
  for (const raw of log.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.length > 2000) continue;
    const hit = COMPLAINTS.find((c) => c.pattern.test(line));
    if (hit) return { format: hit.format, line };
  }
  return undefined;
}

interface ConfigValue {
  configMap: string;
  key: string;
  /** Where the container sees it: the file path of a mounted key, or `env NAME`. */
  where: string;
  value: string;
}

type VolumeSource = { name?: string; items?: Array<{ key?: string; path?: string }> };

/** Every ConfigMap value a container reads: keys of mounted ConfigMap (and projected) volumes, env and envFrom. */
function configValues(ctx: AnalyzerContext, pod: KubeObject, c: ContainerView): ConfigValue[] {
  const namespace = pod.metadata.namespace ?? ctx.namespace;
  const dataOf = (name: string | undefined): Record<string, string> | undefined => {
    const cm = configMapNamed(ctx, namespace, name);
    return cm ? configMapData(cm) : undefined;
  };
  const out: ConfigValue[] = [];
  const volumes: Array<{
    name?: string;
    configMap?: VolumeSource;
    projected?: { sources?: Array<{ configMap?: VolumeSource }> };
  }> = Array.isArray(pod.spec?.volumes) ? pod.spec.volumes : [];
  const mounts: Array<{ name?: string; mountPath?: string; subPath?: string }> = Array.isArray(c.spec?.volumeMounts)
    ? c.spec.volumeMounts
    : [];
  for (const m of mounts) {
    const volume = volumes.find((v) => v.name === m.name);
    const sources = [
      ...(volume?.configMap ? [volume.configMap] : []),
      ...(volume?.projected?.sources ?? []).flatMap((s) => (s.configMap ? [s.configMap] : [])),
    ];
    for (const source of sources) {
      const data = dataOf(source.name);
      if (data === undefined) continue;
      // With items only the listed keys are files, at their own paths; without, every key is a file of its name.
      const files = source.items?.length
        ? source.items.map((i) => ({ key: i.key ?? '', path: i.path ?? i.key ?? '' }))
        : Object.keys(data).map((key) => ({ key, path: key }));
      for (const f of files) {
        const value = data[f.key];
        if (value === undefined) continue;
        if (m.subPath !== undefined && m.subPath !== f.path) continue;
        const base = (m.mountPath ?? '').replace(/\/+$/, '');
        out.push({
          configMap: String(source.name),
          key: f.key,
          where: m.subPath !== undefined ? base : `${base}/${f.path}`,
          value,
        });
      }
    }
  }
  const env: Array<{ name?: string; valueFrom?: { configMapKeyRef?: { name?: string; key?: string } } }> =
    Array.isArray(c.spec?.env) ? c.spec.env : [];
  for (const e of env) {
    const r = e.valueFrom?.configMapKeyRef;
    const value = r?.key === undefined ? undefined : dataOf(r.name)?.[r.key];
    if (r?.key !== undefined && value !== undefined) {
      out.push({ configMap: String(r.name), key: r.key, where: `env ${e.name}`, value });
    }
  }
  const envFrom: Array<{ configMapRef?: { name?: string }; prefix?: string }> = Array.isArray(c.spec?.envFrom)
    ? c.spec.envFrom
    : [];
  for (const e of envFrom) {
    for (const [key, value] of Object.entries(dataOf(e.configMapRef?.name) ?? {})) {
      out.push({ configMap: String(e.configMapRef?.name), key, where: `env ${e.prefix ?? ''}${key}`, value });
    }
  }
  return out;
}

/** Whether a value is meant as a document of the format: by the key's extension, or a JSON value by its shape. */
function meantAs(format: Format, v: ConfigValue): boolean {
  const ext = /\.([A-Za-z]+)$/.exec(v.key)?.[1]?.toLowerCase();
  if (format === 'JSON') return ext === 'json' || (ext === undefined && /^\s*[[{]/.test(v.value));
  return ext === 'yaml' || ext === 'yml';
}

/** The parser's own complaint about a value, or undefined when it parses. */
function syntaxError(format: Format, value: string): string | undefined {
  try {
    if (format === 'JSON') JSON.parse(value);
    else load(value);
    return undefined;
  } catch (err) {
    return String((err as Error).message ?? err).split('\n')[0];
  }
}

export interface BrokenConfig {
  configMap: string;
  key: string;
  where: string;
  format: Format;
  /** The program's complaint, as logged. */
  complaint: string;
  /** Why the value does not parse, in calmops's own parser's words. */
  error: string;
}

/**
 * The ConfigMap value a crash-looping container cannot parse: the log holds a parser's syntax error, and exactly
 * one ConfigMap value the container reads in that format fails to parse (among those whose path the log names,
 * when it names one). Undefined when none fails (the document came from elsewhere) or several do (no telling which).
 */
export function brokenConfigFile(
  ctx: AnalyzerContext,
  pod: KubeObject,
  c: ContainerView,
  log: string | undefined,
): BrokenConfig | undefined {
  const complaint = parseComplaint(log);
  if (complaint === undefined || log === undefined) return undefined;
  const values = configValues(ctx, pod, c).filter((v) => meantAs(complaint.format, v));
  const named = values.filter((v) => v.where.startsWith('/') && log.includes(v.where));
  const broken = (named.length > 0 ? named : values)
    .map((v) => ({ v, error: syntaxError(complaint.format, v.value) }))
    .filter((x): x is { v: ConfigValue; error: string } => x.error !== undefined);
  const first = broken[0];
  if (first === undefined || broken.some((b) => b.v.configMap !== first.v.configMap || b.v.key !== first.v.key)) {
    return undefined;
  }
  return {
    configMap: first.v.configMap,
    key: first.v.key,
    where: first.v.where,
    format: complaint.format,
    complaint: clip(scrubText(complaint.line)),
    error: clip(scrubText(first.error)),
  };
}
