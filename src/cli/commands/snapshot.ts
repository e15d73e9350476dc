import { existsSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import {
  CaptureError,
  type CaptureResult,
  captureNamespace,
  DEFAULT_CAPTURE_DEADLINE_MS,
  DEFAULT_CAPTURE_MAX_ITEMS,
} from '../../cluster/capture.js';
import { KubeconfigError, resolveKubeconfigSource } from '../../cluster/kubeconfig.js';
import { createClusterReader, type KubeClusterReader } from '../../cluster/reader.js';
import { formatSnapshot, siblingLogsPath } from '../../cluster/snapshot.js';
import { painterFor } from '../colour.js';
import { parseCommandLine } from '../flags.js';
import { checkInputFile, DEFAULT_MAX_INPUT_BYTES, InputFileError } from '../input-files.js';
import { type CliCommand, type CliIo, UsageError, usageFailure } from '../io.js';
import { startProgress } from '../progress.js';
import { printable, shown } from '../text.js';

export const USAGE = `Usage: calmops snapshot -n NS [-o FILE] [--logs-out FILE] [--kubeconfig FILE] [--context C] [--tail N]
                        [--request-timeout S] [--deadline S] [--max-items N]
                        [--allow-exec] [--insecure-skip-tls-verify]

Captures a namespace from a cluster, read-only, as a snapshot that calmops triage and serve-snapshot replay offline.
Secrets are never read.

  -n, --namespace NS   the namespace to capture (required)
  -o, --output FILE    where to write the snapshot (default: standard output); a snapshot is always YAML, so
                       -o yaml means standard output too, and other format names (json, text, …) are refused:
                       write -o ./json for a file of that name
  --logs-out FILE      where to write the logs JSON of pods that are not ready or restarting
                       (default with -o: FILE's sibling *.logs.json; without -o logs are not read)
  --kubeconfig FILE    kubeconfig to use (default: $KUBECONFIG, ~/.kube/config, or the pod's service account)
  --context C          kubeconfig context (default: the current context)
  --tail N             lines of each log to keep (default: 200)
  --request-timeout S  seconds to wait for each API request (default: 10)
  --deadline S         seconds the whole capture may take (default: ${DEFAULT_CAPTURE_DEADLINE_MS / 1000})
  --max-items N        objects kept per kind; a kind with more is cut, with a warning (default: ${DEFAULT_CAPTURE_MAX_ITEMS})
  --allow-exec         let the kubeconfig run its exec plugin or auth-provider command (refused otherwise)
  --insecure-skip-tls-verify
                       accept a kubeconfig that turns off certificate checks for an https server
`;

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

interface SnapshotOptions {
  namespace: string;
  output?: string;
  logsOut?: string;
  kubeconfig?: string;
  context?: string;
  tail: number;
  requestTimeoutMs: number;
  deadlineMs: number;
  maxItems: number;
  allowExec: boolean;
  allowInsecureTls: boolean;
}

/** Words kubectl takes after -o: given to snapshot's -o, they were meant as a format, not as a file name. */
const FORMAT_WORDS = new Set(['json', 'text', 'wide', 'name', 'table', 'yml']);

function parseOptions(args: string[]): SnapshotOptions | 'help' {
  const { values } = parse(args);
  if (values.help) return 'help';
  if (values.output === 'yaml') delete values.output;
  else if (values.output !== undefined && (FORMAT_WORDS.has(values.output) || values.output.startsWith('jsonpath'))) {
    throw new UsageError(
      `-o ${shown(values.output, 40)}: a snapshot is always YAML, and -o names the file to write it to; leave -o out ` +
        `(or give -o yaml) to print it, or write -o ./${shown(values.output, 40)} for a file of that name`,
    );
  }
  const namespace = values.namespace;
  if (namespace === undefined) throw new UsageError('missing -n NAMESPACE');
  if (namespace.length > 63 || !DNS1123_LABEL.test(namespace)) {
    throw new UsageError(
      `namespace '${shown(namespace, 80)}' is not a valid name (lowercase letters, digits and '-', ≤ 63)`,
    );
  }
  for (const [flag, path] of [
    ['--output', values.output],
    ['--logs-out', values['logs-out']],
  ] as const) {
    if (path === undefined) continue;
    if (path === '') throw new UsageError(`${flag}: empty path`);
    const dir = dirname(resolve(path));
    if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UsageError(`${flag}: folder ${dir} does not exist`);
  }
  if (values.context === '') throw new UsageError('--context: empty name');
  return {
    namespace,
    ...(values.output !== undefined ? { output: values.output } : {}),
    ...(values['logs-out'] !== undefined ? { logsOut: values['logs-out'] } : {}),
    ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}),
    ...(values.context !== undefined ? { context: values.context } : {}),
    tail: integer('--tail', values.tail ?? '200', 1, 100_000),
    requestTimeoutMs: integer('--request-timeout', values['request-timeout'] ?? '10', 1, 600) * 1000,
    deadlineMs: integer('--deadline', values.deadline ?? String(DEFAULT_CAPTURE_DEADLINE_MS / 1000), 1, 86_400) * 1000,
    maxItems: integer('--max-items', values['max-items'] ?? String(DEFAULT_CAPTURE_MAX_ITEMS), 1, 1_000_000),
    allowExec: values['allow-exec'] === true,
    allowInsecureTls: values['insecure-skip-tls-verify'] === true,
  };
}

function parse(args: string[]) {
  return parseCommandLine(
    args,
    {
      namespace: { type: 'string', short: 'n' },
      output: { type: 'string', short: 'o' },
      'logs-out': { type: 'string' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      tail: { type: 'string' },
      'request-timeout': { type: 'string' },
      deadline: { type: 'string' },
      'max-items': { type: 'string' },
      'allow-exec': { type: 'boolean' },
      'insecure-skip-tls-verify': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    { command: 'snapshot' },
  );
}

function integer(flag: string, text: string, min: number, max: number): number {
  if (!/^\d+$/.test(text)) throw new UsageError(`${flag}: not a whole number: ${shown(text, 40)}`);
  const value = Number(text);
  if (value < min || value > max) throw new UsageError(`${flag}: must be between ${min} and ${max}, got ${value}`);
  return value;
}

function openReader(options: SnapshotOptions, io: CliIo): KubeClusterReader {
  const source = resolveKubeconfigSource(options.kubeconfig, io.env);
  for (const file of [source.file ?? []].flat()) checkInputFile(file, 'kubeconfig', DEFAULT_MAX_INPUT_BYTES);
  return createClusterReader({
    kubeconfig: { ...source, allowExec: options.allowExec, allowInsecureTls: options.allowInsecureTls },
    ...(options.context !== undefined ? { context: options.context } : {}),
    requestTimeoutMs: options.requestTimeoutMs,
    userAgent: 'calmops-snapshot',
  });
}

function summary(result: CaptureResult): string {
  const counts = new Map<string, number>();
  for (const o of result.objects) counts.set(o.kind ?? '?', (counts.get(o.kind ?? '?') ?? 0) + 1);
  return [...counts].map(([kind, n]) => `${kind}: ${n}`).join(', ') || 'no objects';
}

export const run: CliCommand = async (args, io) => {
  let options: SnapshotOptions;
  let reader: KubeClusterReader;
  try {
    const parsed = parseOptions(args);
    if (parsed === 'help') {
      io.stdout(USAGE);
      return 0;
    }
    options = parsed;
    reader = openReader(options, io);
  } catch (error) {
    if (error instanceof UsageError || error instanceof KubeconfigError || error instanceof InputFileError) {
      return usageFailure(io, 'snapshot', error, USAGE);
    }
    throw error;
  }

  const logsOut = options.logsOut ?? (options.output !== undefined ? siblingLogsPath(options.output) : undefined);
  const controller = new AbortController();
  let interrupted = false;
  void io.interrupted?.then(() => {
    interrupted = true;
    controller.abort();
  });

  io.stderr(`reading namespace ${options.namespace} from ${reader.server} (context ${reader.context})\n`);
  const progress = startProgress(io, `calmops snapshot: reading ${options.namespace}`);
  let result: CaptureResult;
  try {
    result = await captureNamespace(progress.reader(reader), {
      namespace: options.namespace,
      logs: logsOut !== undefined,
      tailLines: options.tail,
      deadlineMs: options.deadlineMs,
      maxItems: options.maxItems,
      signal: controller.signal,
    });
  } catch (error) {
    progress.end();
    if (interrupted) {
      io.stderr('calmops snapshot: interrupted; nothing written\n');
      return 130;
    }
    if (error instanceof CaptureError) {
      io.stderr(`calmops snapshot: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
  progress.end();
  if (interrupted) {
    io.stderr('calmops snapshot: interrupted; nothing written\n');
    return 130;
  }

  const warn = painterFor(io, 'stderr')('warning:', 'yellow');
  for (const warning of result.warnings) io.stderr(`${warn} ${printable(warning)}\n`);
  if (result.configMaps.length > 0) {
    const names = result.configMaps.slice(0, 10).join(', ') + (result.configMaps.length > 10 ? ', …' : '');
    io.stderr(
      `${warn} the snapshot holds ${result.configMaps.length} ConfigMap(s) as they are (${printable(names)}); ` +
        'review them for credentials before sharing the snapshot\n',
    );
  }

  const yaml = formatSnapshot(result.objects);
  try {
    if (options.output === undefined) io.stdout(yaml);
    else await writeFile(options.output, yaml, 'utf8');
    if (logsOut !== undefined) await writeFile(logsOut, `${JSON.stringify(result.logs, null, 2)}\n`, 'utf8');
  } catch (error) {
    io.stderr(`calmops snapshot: cannot write the snapshot: ${(error as Error).message}\n`);
    return 1;
  }

  const where = options.output ?? 'standard output';
  io.stderr(`captured ${summary(result)} → ${where}\n`);
  if (logsOut !== undefined) {
    io.stderr(
      `captured ${Object.keys(result.logs).length} container log(s) → ${logsOut}; logs are written as they are, ` +
        'review them before sharing\n',
    );
  } else {
    io.stderr('logs not captured: pass --logs-out FILE (or -o FILE) to capture them\n');
  }
  return 0;
};
