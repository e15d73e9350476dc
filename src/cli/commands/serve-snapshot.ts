import { resolve } from 'node:path';
import { SnapshotFileError, SnapshotFormatError, secretsSkippedNotice } from '../../cluster/snapshot.js';
import type { StoredObject } from '../../cluster/stored-object.js';
import { byCodePoint } from '../../code-point-order.js';
import { writeKubeconfig } from '../../snapshot-api/kubeconfig.js';
import { type SnapshotServer, SnapshotServerError, startSnapshotServer } from '../../snapshot-api/server.js';
import { parseCommandLine } from '../flags.js';
import { DEFAULT_MAX_INPUT_BYTES, InputFileError, loadSnapshotInput, parseByteSize } from '../input-files.js';
import { type CliCommand, type CliIo, UsageError, usageFailure } from '../io.js';
import { checkNowWindow, NOW_WINDOW_DAYS, parseNowOption } from '../now-option.js';
import { OUTPUT_FLAGS, type OutputFormat, outputFormat, renderData } from '../output.js';
import { shown } from '../text.js';

export const USAGE = `Usage: calmops serve-snapshot FILE [--logs FILE] [--port P] [--host H] [--kubeconfig OUT]
                              [--namespace NS] [--now ISO] [--latency MS] [--fault-rate R] [--seed N]
                              [--max-bytes N] [-o text|json|yaml]

Serves a cluster snapshot through the Kubernetes API (read-only) and writes a kubeconfig for it.

  FILE              multi-document YAML of Kubernetes objects (kubectl get -o yaml output)
  --logs FILE       pod logs as JSON ({"namespace/pod/container[:previous]": "text"});
                    default: FILE's sibling *.logs.json when present
  --port P          port to listen on (default: a free port)
  --host H          address to listen on (default: 127.0.0.1; the server has no authentication)
  --kubeconfig OUT  where to write the kubeconfig (default: .calmops/snapshot.kubeconfig)
  --namespace NS    default namespace of the kubeconfig context (default: the snapshot's busiest namespace)
  --now ISO         the time ages are computed from (default: the newest timestamp in the snapshot);
                    within ${NOW_WINDOW_DAYS} days of that timestamp
  --latency MS      delay every request by MS milliseconds
  --fault-rate R    answer this fraction (0-1) of resource requests with 500 InternalError
  --seed N          seed for the fault draws (default: 1)
  --max-bytes N     largest input file read (snapshot, logs), e.g. 512M (default 256M)
  -o, --output F    how to print what is served: text (default), or json or yaml for a script (the server's
                    URL, the kubeconfig written, the counts), printed once when the server is up
  --json            the same as -o json
`;

interface ServeOptions {
  file: string;
  logs?: string;
  port: number;
  host: string;
  kubeconfig: string;
  namespace?: string;
  now?: Date;
  latencyMs: number;
  faultRate: number;
  seed: number;
  maxBytes: number;
  output: OutputFormat;
}

function parseOptions(args: string[]): ServeOptions {
  const { values, positionals } = parse(args);
  if (positionals.length !== 1) {
    throw new UsageError(
      positionals.length === 0 ? 'missing snapshot FILE' : `expected one snapshot FILE, got ${positionals.length}`,
    );
  }
  const now = values.now === undefined ? undefined : parseNowOption('--now', values.now);
  return {
    file: positionals[0] as string,
    ...(values.logs !== undefined ? { logs: values.logs } : {}),
    port: integer('--port', values.port ?? '0', 0, 65535),
    host: values.host ?? '127.0.0.1',
    kubeconfig: values.kubeconfig ?? '.calmops/snapshot.kubeconfig',
    ...(values.namespace !== undefined ? { namespace: values.namespace } : {}),
    ...(now !== undefined ? { now } : {}),
    latencyMs: integer('--latency', values.latency ?? '0', 0, 600_000),
    faultRate: fraction('--fault-rate', values['fault-rate'] ?? '0'),
    seed: integer('--seed', values.seed ?? '1', 0, 2 ** 31 - 1),
    maxBytes:
      values['max-bytes'] === undefined ? DEFAULT_MAX_INPUT_BYTES : parseByteSize('--max-bytes', values['max-bytes']),
    output: outputFormat(values, ['text', 'json', 'yaml'], 'text'),
  };
}

function parse(args: string[]) {
  return parseCommandLine(
    args,
    {
      logs: { type: 'string' },
      port: { type: 'string', short: 'p' },
      host: { type: 'string' },
      kubeconfig: { type: 'string' },
      namespace: { type: 'string', short: 'n' },
      now: { type: 'string' },
      latency: { type: 'string' },
      'fault-rate': { type: 'string' },
      seed: { type: 'string' },
      'max-bytes': { type: 'string' },
      ...OUTPUT_FLAGS,
      help: { type: 'boolean', short: 'h' },
    },
    { positionals: true },
  );
}

function integer(flag: string, text: string, min: number, max: number): number {
  if (!/^\d+$/.test(text)) throw new UsageError(`${flag}: expected a whole number, got "${shown(text, 40)}"`);
  const value = Number(text);
  if (value < min || value > max) throw new UsageError(`${flag}: must be between ${min} and ${max}, got ${value}`);
  return value;
}

function fraction(flag: string, text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0 || value > 1) {
    throw new UsageError(`${flag}: expected a number between 0 and 1, got "${shown(text, 40)}"`);
  }
  return value;
}

/** The namespace holding the most objects, so `kubectl get pods` without `-n` shows the incident. */
function busiestNamespace(objects: readonly StoredObject[]): string | undefined {
  const counts = new Map<string, number>();
  for (const object of objects) {
    const ns = object.namespace;
    if (ns) counts.set(ns, (counts.get(ns) ?? 0) + 1);
  }
  let best: string | undefined;
  let bestCount = 0;
  for (const [ns, count] of [...counts].sort(([a], [b]) => byCodePoint(a, b))) {
    if (count > bestCount) {
      best = ns;
      bestCount = count;
    }
  }
  return best;
}

function quote(path: string): string {
  return /^[\w./-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}

/** What the server serves, for the lines that say so. */
interface ServingSummary {
  objects: number;
  logs: number;
  logsPath?: string;
  namespace?: string;
  skipped: string[];
  secrets?: string;
}

/** Loads the snapshot and starts serving it; what it serves. */
async function startServing(options: ServeOptions): Promise<{ server: SnapshotServer; summary: ServingSummary }> {
  const snapshot = await loadSnapshotInput(options.file, options.logs, options.maxBytes);
  if (options.now !== undefined) {
    checkNowWindow('--now', options.now, { snapshotNewest: snapshot.taken }, new Date());
  }
  const server = await startSnapshotServer({
    objects: snapshot.served,
    logs: snapshot.logs,
    port: options.port,
    host: options.host,
    latencyMs: options.latencyMs,
    faultRate: options.faultRate,
    seed: options.seed,
    now: options.now ?? snapshot.taken,
  });
  const namespace = options.namespace ?? busiestNamespace(snapshot.stored);
  const summary: ServingSummary = {
    objects: server.catalog.count(),
    logs: Object.keys(snapshot.logs).length,
    ...(snapshot.logsPath ? { logsPath: snapshot.logsPath } : {}),
    ...(namespace ? { namespace } : {}),
    skipped: [...server.catalog.skippedKinds].map(([kind, count]) => `${kind} (${count})`),
  };
  const secrets = secretsSkippedNotice(snapshot.secretsSkipped);
  if (secrets) summary.secrets = secrets;
  return { server, summary };
}

/** Where the server listens, what it serves and how to point kubectl at it: text, or one JSON or YAML document. */
function printServing(io: CliIo, options: ServeOptions, server: SnapshotServer, summary: ServingSummary): void {
  if (options.output !== 'text') {
    io.stdout(
      renderData(options.output, {
        server: server.url,
        kubeconfig: resolve(options.kubeconfig),
        ...(summary.namespace ? { namespace: summary.namespace } : {}),
        snapshot: options.file,
        objects: summary.objects,
        logs: summary.logs,
        ...(summary.logsPath ? { logsFile: summary.logsPath } : {}),
        ...(summary.secrets ? { secrets: summary.secrets } : {}),
        notServed: summary.skipped,
        injected: { latencyMs: options.latencyMs, faultRate: options.faultRate },
      }),
    );
  } else {
    const kubeconfig = quote(resolve(options.kubeconfig));
    const lines = [
      `Serving ${summary.objects} objects from ${options.file} at ${server.url} (read-only)`,
      summary.logsPath ? `Logs: ${summary.logs} container logs from ${summary.logsPath}` : 'Logs: none',
      ...(summary.secrets ? [`Secrets: ${summary.secrets}`] : []),
      ...(summary.skipped.length > 0
        ? [`Not served (kinds calmops does not read): ${summary.skipped.join(', ')}`]
        : []),
      ...(options.latencyMs > 0 || options.faultRate > 0
        ? [`Injected: ${options.latencyMs} ms latency, ${options.faultRate * 100}% of requests fail with 500`]
        : []),
      `Kubeconfig: ${kubeconfig}${summary.namespace ? ` (namespace ${summary.namespace})` : ''}`,
      '',
      'Try:',
      `  export KUBECONFIG=${kubeconfig}`,
      '  kubectl get pods',
      '  kubectl get events --sort-by=.lastTimestamp',
      '  kubectl describe pod POD',
      '  kubectl logs POD --previous',
      '',
      'Press Ctrl-C to stop.',
      '',
    ];
    io.stdout(lines.join('\n'));
  }
}

export const run: CliCommand = async (args: string[], io: CliIo): Promise<number> => {
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout(USAGE);
    return 0;
  }
  // Asked for before anything is printed: a script that reads the address and stops the server at once must find
  // Ctrl-C handled, not the default action of the signal.
  const interrupted = io.interrupted;
  let options: ServeOptions;
  let server: SnapshotServer;
  let summary: ServingSummary;
  try {
    options = parseOptions(args);
    ({ server, summary } = await startServing(options));
  } catch (error) {
    return reportStartFailure(error, io);
  }
  try {
    await writeKubeconfig(options.kubeconfig, {
      server: server.url,
      ...(summary.namespace ? { namespace: summary.namespace } : {}),
    });
  } catch (error) {
    await server.close();
    io.stderr(`calmops serve-snapshot: cannot write kubeconfig ${options.kubeconfig}: ${(error as Error).message}\n`);
    return 2;
  }

  printServing(io, options, server, summary);
  // With no interrupt signal wired in, serve until the process is stopped.
  await (interrupted ?? new Promise<void>(() => {}));
  await server.close();
  // JSON and YAML output stays one document on stdout.
  if (options.output === 'text') io.stdout('Snapshot server stopped.\n');
  else io.stderr('Snapshot server stopped.\n');
  return 0;
};

function reportStartFailure(error: unknown, io: CliIo): number {
  if (
    error instanceof UsageError ||
    error instanceof SnapshotFileError ||
    error instanceof SnapshotFormatError ||
    error instanceof SnapshotServerError ||
    error instanceof InputFileError
  ) {
    if (error instanceof UsageError) return usageFailure(io, 'serve-snapshot', error, USAGE);
    io.stderr(`calmops serve-snapshot: ${error.message}\n`);
    return 2;
  }
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
    io.stderr(`calmops serve-snapshot: cannot listen: ${(error as Error).message}\n`);
    return 2;
  }
  io.stderr(`calmops serve-snapshot: ${(error as Error).message ?? String(error)}\n`);
  return 1;
}
