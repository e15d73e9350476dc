import { existsSync, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { KubeconfigError, resolveKubeconfigSource } from '../../cluster/kubeconfig.js';
import { SnapshotFileError, SnapshotFormatError, secretsSkippedNotice } from '../../cluster/snapshot.js';
import type { ClusterReader } from '../../cluster/types.js';
import { isKubeLabel } from '../../limits.js';
import type { NamespaceScope } from '../../mcp/scope.js';
import { createMcpServer } from '../../mcp/server.js';
import type { NamespaceWitness } from '../../mcp/triage-tool.js';
import { loadPolicyFile, PolicyError } from '../../policy/channel-policy.js';
import { kubeconfigJson } from '../../snapshot-api/kubeconfig.js';
import { type SnapshotServer, SnapshotServerError, startSnapshotServer } from '../../snapshot-api/server.js';
import {
  DEFAULT_STEP_BUDGET,
  DEFAULT_TIMEOUT_MS,
  MAX_STEP_BUDGET,
  type TriageLogger,
  triageReader,
} from '../../triage/index.js';
import { parseStepBudget, parseTimeoutSeconds } from '../bounds.js';
import { parseCommandLine } from '../flags.js';
import {
  checkInputFile,
  DEFAULT_MAX_INPUT_BYTES,
  InputFileError,
  loadSnapshotInput,
  parseByteSize,
} from '../input-files.js';
import { type CliCommand, type CliIo, UsageError, usageFailure } from '../io.js';
import { checkNamespace, describeMissing, witnessNamespaces } from '../namespace-check.js';
import { printable, shown } from '../text.js';
import { CALMOPS_VERSION } from '../version.js';

export const USAGE = `Usage: calmops mcp (--namespaces NS[,NS…] | --policy FILE [--channel ID])
                   [--snapshot FILE [--logs FILE] | --kubeconfig FILE [--context C]]
                   [-n NS] [--step-budget N] [--timeout S] [--snapshot-dir DIR] [--verbose]
                   [--allow-exec] [--insecure-skip-tls-verify] [--max-bytes N]

Serves calmops to an assistant over the Model Context Protocol, on standard input and output: the tools triage,
read, intents and snapshot, and the intents and the triage envelope's JSON Schema as resources. Every tool only
reads the cluster, within the namespaces given. Register it with your assistant as described in docs/mcp.md.

  --namespaces LIST  the namespaces the assistant may read, comma-separated; '*' for any one namespace at a time
  --policy FILE      take them from a channel policy's allowedNamespaces instead (docs/policy.md)
  --channel ID       the policy's channel whose list applies (default: the policy's defaults)
  --snapshot FILE    serve a cluster snapshot (multi-document YAML) instead of a live cluster
  --logs FILE        pod logs for the snapshot (default: FILE's sibling *.logs.json when present)
  --kubeconfig FILE  kubeconfig of the cluster to read (default: $KUBECONFIG, then ~/.kube/config)
  --context C        kubeconfig context (default: the current context)
  -n, --namespace NS what a read that names no namespace reads (default: the first namespace of the list,
                     else "default")
  --step-budget N    rounds of reads of a triage unless a call asks otherwise, 1-${MAX_STEP_BUDGET} (default ${DEFAULT_STEP_BUDGET})
  --timeout S        deadline of one triage or one read, in seconds (default ${DEFAULT_TIMEOUT_MS / 1000})
  --snapshot-dir DIR where the snapshot tool writes (default: the current folder)
  --verbose          log each triage's steps to stderr
  --allow-exec       let the kubeconfig run its exec plugin or auth-provider command (refused otherwise)
  --insecure-skip-tls-verify
                     accept a kubeconfig that turns off certificate checks for an https server
  --max-bytes N      largest input file read (snapshot, logs, kubeconfig), e.g. 512M (default 256M)
`;

/** How long a snapshot capture may take: longer than a triage, as `calmops snapshot` allows, but bounded. */
const SNAPSHOT_DEADLINE_MS = 120_000;
/** How long the check that a triaged namespace exists may take, after the triage. */
const NAMESPACE_CHECK_MS = 10_000;

interface McpOptions {
  namespaces?: string;
  policy?: string;
  channel?: string;
  snapshot?: string;
  logs?: string;
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  stepBudget: number;
  timeoutMs: number;
  snapshotDir: string;
  verbose: boolean;
  allowExec: boolean;
  allowInsecureTls: boolean;
  maxBytes: number;
}

function parse(args: string[]): McpOptions | 'help' {
  const { values } = parseCommandLine(
    args,
    {
      namespaces: { type: 'string' },
      policy: { type: 'string' },
      channel: { type: 'string' },
      snapshot: { type: 'string' },
      logs: { type: 'string' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      namespace: { type: 'string', short: 'n' },
      'step-budget': { type: 'string' },
      timeout: { type: 'string' },
      'snapshot-dir': { type: 'string' },
      verbose: { type: 'boolean', short: 'v' },
      'allow-exec': { type: 'boolean' },
      'insecure-skip-tls-verify': { type: 'boolean' },
      'max-bytes': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    { command: 'mcp' },
  );
  if (values.help) return 'help';
  if (values.namespaces === undefined && values.policy === undefined) {
    throw new UsageError(
      "say which namespaces the assistant may read: --namespaces shop,payments (or --namespaces '*' for any one at a time), or --policy FILE",
    );
  }
  if (values.namespaces !== undefined && values.policy !== undefined) {
    throw new UsageError('--namespaces and --policy exclude each other: give the list, or the policy that holds it');
  }
  if (values.channel !== undefined && values.policy === undefined) throw new UsageError('--channel needs --policy');
  if (values.snapshot !== undefined && values.kubeconfig !== undefined) {
    throw new UsageError('--snapshot and --kubeconfig exclude each other: serve a snapshot or read a cluster');
  }
  if (values.logs !== undefined && values.snapshot === undefined) throw new UsageError('--logs needs --snapshot');
  if (values.context !== undefined && values.snapshot !== undefined) {
    throw new UsageError('--context applies to --kubeconfig, not --snapshot');
  }
  if (values.namespace !== undefined && !isKubeLabel(values.namespace)) {
    throw new UsageError(`--namespace: "${shown(values.namespace, 80)}" is not a namespace name`);
  }
  const stepBudget = values['step-budget'] === undefined ? DEFAULT_STEP_BUDGET : parseStepBudget(values['step-budget']);
  const timeoutMs = values.timeout === undefined ? DEFAULT_TIMEOUT_MS : parseTimeoutSeconds(values.timeout);
  const snapshotDir = resolve(values['snapshot-dir'] ?? '.');
  if (!existsSync(snapshotDir) || !statSync(snapshotDir).isDirectory()) {
    throw new UsageError(`--snapshot-dir: folder ${shown(snapshotDir)} does not exist`);
  }
  const optional = <K extends keyof McpOptions>(key: K, value: McpOptions[K] | undefined) =>
    value === undefined ? {} : { [key]: value };
  return {
    ...optional('namespaces', values.namespaces),
    ...optional('policy', values.policy),
    ...optional('channel', values.channel),
    ...optional('snapshot', values.snapshot),
    ...optional('logs', values.logs),
    ...optional('kubeconfig', values.kubeconfig),
    ...optional('context', values.context),
    ...optional('namespace', values.namespace),
    stepBudget,
    timeoutMs,
    snapshotDir,
    verbose: values.verbose === true,
    allowExec: values['allow-exec'] === true,
    allowInsecureTls: values['insecure-skip-tls-verify'] === true,
    maxBytes:
      values['max-bytes'] === undefined ? DEFAULT_MAX_INPUT_BYTES : parseByteSize('--max-bytes', values['max-bytes']),
  };
}

function scopeOf(list: readonly string[], where: string): NamespaceScope {
  const [first, ...rest] = list;
  if (first === undefined) throw new UsageError(`${where} names no namespace`);
  return { kind: 'list', namespaces: [first, ...rest] };
}

/** `--namespaces a,b` or `'*'`, each a namespace name, none twice. */
export function parseNamespaces(text: string): NamespaceScope {
  const names = text
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  if (names.length === 1 && names[0] === '*') return { kind: 'all' };
  for (const name of names) {
    if (name === '*') throw new UsageError("--namespaces: '*' stands alone, for any one namespace at a time");
    if (!isKubeLabel(name)) throw new UsageError(`--namespaces: "${shown(name, 80)}" is not a namespace name`);
  }
  return scopeOf([...new Set(names)], '--namespaces');
}

async function policyScope(file: string, channel: string | undefined): Promise<NamespaceScope> {
  const policy = await loadPolicyFile(file);
  const rules = channel === undefined ? policy.forUnlistedChannels() : policy.forChannel(channel);
  const which = channel === undefined ? 'its defaults' : `channel ${channel}`;
  if (rules === undefined) throw new UsageError(`the policy in ${shown(file)} sets up no rules for ${which}`);
  if (rules.allowedNamespaces.length === 0) {
    throw new UsageError(
      `the policy in ${shown(file)} lists no allowedNamespaces for ${which}; add them there, or pass --namespaces`,
    );
  }
  return scopeOf(rules.allowedNamespaces, `the policy's allowedNamespaces for ${which}`);
}

function stderrLogger(io: CliIo, verbose: boolean): TriageLogger {
  return {
    info: (message) => {
      if (verbose) io.stderr(`${printable(message)}\n`);
    },
    warn: (message) => io.stderr(`warning: ${printable(message)}\n`),
  };
}

function witnessFor(where: string, snapshot: boolean): NamespaceWitness {
  return (reader: ClusterReader) => {
    const watched = witnessNamespaces(reader);
    return {
      reader: watched.reader,
      async confirm(namespace) {
        const found = await checkNamespace(watched.reader, namespace, {
          snapshot,
          seen: watched.seen,
          signal: AbortSignal.timeout(NAMESPACE_CHECK_MS),
        });
        if (found.status === 'found') return found;
        if (found.status === 'missing') {
          return {
            status: 'missing',
            message: `${describeMissing(namespace, found.present, where)}. Call triage again with one of those namespaces.`,
          };
        }
        return {
          status: 'unconfirmed',
          message: `could not confirm that namespace "${namespace}" exists: ${found.reason}; the triage covers what the reads returned`,
        };
      },
    };
  };
}

/** Resolves once the client is gone (standard input ended) or the person pressed Ctrl-C. */
function untilDisconnected(io: CliIo, closed: Promise<void>): Promise<void> {
  const ended = new Promise<void>((done) => {
    process.stdin.once('end', done);
    process.stdin.once('close', done);
  });
  return Promise.race([ended, closed, ...(io.interrupted ? [io.interrupted] : [])]);
}

export const run: CliCommand = async (args, io) => {
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout(USAGE);
    return 0;
  }
  let snapshotServer: SnapshotServer | undefined;
  try {
    const options = parse(args);
    if (options === 'help') {
      io.stdout(USAGE);
      return 0;
    }
    const scope =
      options.namespaces !== undefined
        ? parseNamespaces(options.namespaces)
        : await policyScope(options.policy as string, options.channel);

    let reader: ClusterReader;
    let cluster: string;
    let where: string;
    let now: Date | undefined;
    if (options.snapshot !== undefined) {
      const snapshot = await loadSnapshotInput(options.snapshot, options.logs, options.maxBytes);
      const secrets = secretsSkippedNotice(snapshot.secretsSkipped);
      if (secrets) io.stderr(`calmops mcp: ${options.snapshot}: ${secrets}\n`);
      // A replay reads as it did during the incident: "now" is the moment the snapshot was taken.
      now = snapshot.taken;
      snapshotServer = await startSnapshotServer({ objects: snapshot.served, logs: snapshot.logs, port: 0, now });
      reader = triageReader({ yaml: kubeconfigJson({ server: snapshotServer.url }) }, { timeoutMs: options.timeoutMs });
      cluster = `snapshot:${basename(options.snapshot)}`;
      where = `snapshot ${basename(options.snapshot)}`;
    } else {
      const source = resolveKubeconfigSource(options.kubeconfig, io.env);
      for (const file of [source.file ?? []].flat()) checkInputFile(file, 'kubeconfig', options.maxBytes);
      const kube = triageReader(
        { ...source, allowExec: options.allowExec, allowInsecureTls: options.allowInsecureTls },
        { ...(options.context ? { context: options.context } : {}), timeoutMs: options.timeoutMs },
      );
      reader = kube;
      cluster = kube.context;
      where = `cluster ${kube.context}`;
    }

    const server = createMcpServer({
      version: CALMOPS_VERSION,
      reader,
      cluster,
      scope,
      namespace: options.namespace ?? (scope.kind === 'list' ? scope.namespaces[0] : 'default'),
      stepBudget: options.stepBudget,
      timeoutMs: options.timeoutMs,
      snapshotDeadlineMs: SNAPSHOT_DEADLINE_MS,
      snapshotDir: options.snapshotDir,
      witness: witnessFor(where, options.snapshot !== undefined),
      logger: stderrLogger(io, options.verbose),
      ...(now === undefined ? {} : { now }),
    });
    const closed = new Promise<void>((done) => {
      server.server.onclose = () => done();
    });
    // Standard output carries the protocol alone: everything calmops says goes to stderr.
    await server.connect(new StdioServerTransport());
    io.stderr(
      `calmops mcp: serving ${cluster} over stdio (${scope.kind === 'all' ? 'any one namespace' : scope.namespaces.join(', ')}); ` +
        'end standard input or press Ctrl-C to stop\n',
    );
    await untilDisconnected(io, closed);
    await server.close();
    return 0;
  } catch (error) {
    if (
      error instanceof UsageError ||
      error instanceof KubeconfigError ||
      error instanceof InputFileError ||
      error instanceof PolicyError
    ) {
      return usageFailure(io, 'mcp', error, USAGE);
    }
    if (
      error instanceof SnapshotFileError ||
      error instanceof SnapshotFormatError ||
      error instanceof SnapshotServerError
    ) {
      io.stderr(`calmops mcp: ${error.message}\n`);
      return 2;
    }
    throw error;
  } finally {
    await snapshotServer?.close();
  }
};
