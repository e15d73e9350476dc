import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { KubeconfigError, type KubeconfigSource } from '../../cluster/kubeconfig.js';
import { SnapshotFileError, SnapshotFormatError, secretsSkippedNotice } from '../../cluster/snapshot.js';
import { kubeconfigJson } from '../../snapshot-api/kubeconfig.js';
import { type SnapshotServer, SnapshotServerError, startSnapshotServer } from '../../snapshot-api/server.js';
import type { TriageLogger, TriageRequest } from '../../triage/index.js';
import { formatReport, MAX_STEP_BUDGET, silentLogger, triage, triageReader } from '../../triage/index.js';
import {
  AmbiguousNamespaceError,
  InvalidNamespaceError,
  InvalidTriageRequestError,
  UnknownIntentError,
} from '../../triage/route/index.js';
import { TemplateValidationError } from '../../triage/templates/index.js';
import { parseStepBudget, parseTimeoutSeconds } from '../bounds.js';
import { painterFor } from '../colour.js';
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
import { checkNowWindow, NOW_WINDOW_DAYS, parseNowOption } from '../now-option.js';
import { OUTPUT_FLAGS, type OutputFormat, outputFormat, renderData } from '../output.js';
import { startProgress } from '../progress.js';
import { paintTriageReport } from '../report-colour.js';
import { printable, shown } from '../text.js';

export const USAGE = `Usage: calmops triage "<text>" [-n NS] [--intent ID]
                      [--snapshot FILE [--logs FILE] | --kubeconfig FILE [--context C]]
                      [--now ISO] [--step-budget N] [--timeout S] [-o text|json|yaml] [--verbose]
                      [--allow-exec] [--insecure-skip-tls-verify] [--max-bytes N]

Reads a namespace with read-only requests and reports what is wrong, how sure calmops is, what evidence is
missing and what to do next.

  <text>             what is wrong, in your words ("pods stuck pending in payments"), or an intent
  -n, --namespace    namespace to triage (wins over one named in the text); one the cluster does not have
                     is an error (exit 1) that lists the namespaces it has
  --intent ID        skip intent detection (see \`calmops intents\`)
  --snapshot FILE    replay a cluster snapshot (multi-document YAML) instead of a live cluster
  --logs FILE        pod logs for the snapshot (default: FILE's sibling *.logs.json when present)
  --kubeconfig FILE  kubeconfig of the cluster to read (default: $KUBECONFIG, then ~/.kube/config)
  --context C        kubeconfig context (default: the current context)
  --now ISO          the time to treat as "now" (default: the newest timestamp read); within
                     ${NOW_WINDOW_DAYS} days of the snapshot's newest timestamp (live: of the clock)
  --step-budget N    rounds of reads, 1-${MAX_STEP_BUDGET} (default 3)
  --timeout S        overall deadline in seconds (default 20)
  -o, --output F     text (default: the report), json or yaml (the triage envelope)
  --json             the same as -o json
  --verbose          log the triage's steps to stderr
  --allow-exec       let the kubeconfig run its exec plugin or auth-provider command (refused otherwise)
  --insecure-skip-tls-verify
                     accept a kubeconfig that turns off certificate checks for an https server
  --max-bytes N      largest input file read (snapshot, logs, kubeconfig), e.g. 512M (default 256M)
`;

interface Parsed {
  request: TriageRequest;
  snapshot?: string;
  logs?: string;
  kubeconfig?: string;
  context?: string;
  output: OutputFormat;
  verbose: boolean;
  allowExec: boolean;
  allowInsecureTls: boolean;
  maxBytes: number;
}

function parse(args: string[]): Parsed {
  const { values, positionals } = parseRaw(args);
  const text = positionals.join(' ').trim();
  if (!text && !values.intent) throw new UsageError('say what to triage ("<text>") or pass --intent ID');
  if (values.snapshot !== undefined && values.kubeconfig !== undefined) {
    throw new UsageError('--snapshot and --kubeconfig exclude each other: replay a snapshot or read a cluster');
  }
  if (values.logs !== undefined && values.snapshot === undefined) throw new UsageError('--logs needs --snapshot');
  if (values.context !== undefined && values.snapshot !== undefined) {
    throw new UsageError('--context applies to --kubeconfig, not --snapshot');
  }
  const request: TriageRequest = {};
  if (text) request.text = text;
  if (values.intent !== undefined) request.intent = values.intent;
  if (values.namespace !== undefined) request.namespace = values.namespace;
  if (values.now !== undefined) request.now = parseNowOption('--now', values.now);
  if (values['step-budget'] !== undefined) request.stepBudget = parseStepBudget(values['step-budget']);
  if (values.timeout !== undefined) request.timeoutMs = parseTimeoutSeconds(values.timeout);
  return {
    request,
    ...(values.snapshot !== undefined ? { snapshot: values.snapshot } : {}),
    ...(values.logs !== undefined ? { logs: values.logs } : {}),
    ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}),
    ...(values.context !== undefined ? { context: values.context } : {}),
    output: outputFormat(values, ['text', 'json', 'yaml'], 'text'),
    verbose: values.verbose === true,
    allowExec: values['allow-exec'] === true,
    allowInsecureTls: values['insecure-skip-tls-verify'] === true,
    maxBytes:
      values['max-bytes'] === undefined ? DEFAULT_MAX_INPUT_BYTES : parseByteSize('--max-bytes', values['max-bytes']),
  };
}

/**
 * A quoted request that starts with a dash (`calmops triage "-n payments crashloop"`) is text, not an option: an
 * argument that begins with `-` and holds a space is moved behind `--` so the entry dictionary reads it whole.
 */
function textFirst(args: string[]): string[] {
  const end = args.indexOf('--');
  const head = end < 0 ? args : args.slice(0, end);
  const tail = end < 0 ? [] : args.slice(end + 1);
  const isText = (a: string) => a.startsWith('-') && /\s/.test(a.trim());
  const texts = head.filter(isText);
  if (texts.length === 0) return args;
  return [...head.filter((a) => !isText(a)), '--', ...texts, ...tail];
}

function parseRaw(args: string[]) {
  return parseCommandLine(
    textFirst(args),
    {
      namespace: { type: 'string', short: 'n' },
      intent: { type: 'string' },
      snapshot: { type: 'string' },
      logs: { type: 'string' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      now: { type: 'string' },
      'step-budget': { type: 'string' },
      timeout: { type: 'string' },
      ...OUTPUT_FLAGS,
      verbose: { type: 'boolean', short: 'v' },
      'allow-exec': { type: 'boolean' },
      'insecure-skip-tls-verify': { type: 'boolean' },
      'max-bytes': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    { positionals: true },
  );
}

/** kubectl's lookup order: --kubeconfig, then $KUBECONFIG, then ~/.kube/config. */
function defaultKubeconfig(io: CliIo): KubeconfigSource {
  const fromEnv = io.env.KUBECONFIG;
  if (fromEnv) return { file: fromEnv.split(process.platform === 'win32' ? ';' : ':').filter(Boolean) };
  const home = io.env.HOME ?? homedir();
  const file = join(home, '.kube', 'config');
  if (!existsSync(file)) {
    throw new UsageError('no cluster to read: pass --snapshot FILE or --kubeconfig FILE (or set KUBECONFIG)');
  }
  return { file };
}

function stderrLogger(io: CliIo): TriageLogger {
  return {
    info: (message) => io.stderr(`${message}\n`),
    warn: (message) => io.stderr(`${painterFor(io, 'stderr')('warning:', 'yellow')} ${printable(message)}\n`),
  };
}

/** How long the check that the namespace exists may take, after the triage. */
const NAMESPACE_CHECK_MS = 10_000;

export const run: CliCommand = async (args, io) => {
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout(USAGE);
    return 0;
  }
  let server: SnapshotServer | undefined;
  let progress: ReturnType<typeof startProgress> | undefined;
  try {
    const options = parse(args);
    let kubeconfig: KubeconfigSource;
    let cluster: string | undefined;
    if (options.snapshot !== undefined) {
      const snapshot = await loadSnapshotInput(options.snapshot, options.logs, options.maxBytes);
      const secrets = secretsSkippedNotice(snapshot.secretsSkipped);
      if (secrets) io.stderr(`calmops triage: ${options.snapshot}: ${secrets}\n`);
      // A replay reads as it did during the incident: "now" is the moment the snapshot was taken, found while parsing.
      const taken = snapshot.taken;
      // The snapshot is served through the real API on loopback, so a replay takes the same path as a cluster.
      server = await startSnapshotServer({ objects: snapshot.served, logs: snapshot.logs, port: 0, now: taken });
      kubeconfig = { yaml: kubeconfigJson({ server: server.url }) };
      cluster = `snapshot:${basename(options.snapshot)}`;
      if (options.request.now !== undefined) {
        checkNowWindow('--now', options.request.now, { snapshotNewest: taken }, new Date());
      } else if (taken) options.request.now = taken;
      if (options.verbose) io.stderr(`Serving ${options.snapshot} at ${server.url}\n`);
    } else {
      if (options.kubeconfig !== undefined && !existsSync(options.kubeconfig)) {
        throw new UsageError(`kubeconfig file not found: ${shown(options.kubeconfig)}`);
      }
      const files = options.kubeconfig !== undefined ? [options.kubeconfig] : [defaultKubeconfig(io).file ?? []].flat();
      for (const file of files) checkInputFile(file, 'kubeconfig', options.maxBytes);
      kubeconfig = {
        file: files.length === 1 ? (files[0] as string) : files,
        allowExec: options.allowExec,
        allowInsecureTls: options.allowInsecureTls,
      };
      if (options.request.now !== undefined) checkNowWindow('--now', options.request.now, { live: true }, new Date());
    }
    const kube = triageReader(kubeconfig, {
      ...(options.context ? { context: options.context } : {}),
      ...(options.request.timeoutMs === undefined ? {} : { timeoutMs: options.request.timeoutMs }),
    });
    cluster ??= kube.context;
    progress = startProgress(io, `calmops triage: reading ${options.request.namespace ?? 'the cluster'} (${cluster})`);
    const out = progress.io;
    const witnessed = witnessNamespaces(progress.reader(kube));
    const reader = witnessed.reader;
    const envelope = await triage(
      { ...options.request, cluster },
      { reader, logger: options.verbose ? stderrLogger(out) : silentLogger },
    );
    const namespace = envelope.routing.namespace;
    const found = await checkNamespace(reader, namespace, {
      snapshot: options.snapshot !== undefined,
      seen: witnessed.seen,
      signal: AbortSignal.timeout(NAMESPACE_CHECK_MS),
    });
    progress.end();
    if (found.status === 'missing') {
      const where = options.snapshot !== undefined ? `snapshot ${basename(options.snapshot)}` : `cluster ${cluster}`;
      io.stderr(`calmops triage: ${describeMissing(namespace, found.present, where)}\n`);
      return 1;
    }
    if (found.status === 'unconfirmed') {
      const warning = painterFor(io, 'stderr')('warning:', 'yellow');
      io.stderr(
        `calmops triage: ${warning} could not confirm that namespace "${namespace}" exists: ${found.reason}; ` +
          'the triage below covers what the reads returned\n',
      );
    }
    if (options.output === 'text') {
      io.stdout(paintTriageReport(printable(formatReport(envelope)), painterFor(io, 'stdout')));
    } else {
      io.stdout(renderData(options.output, envelope));
    }
    return 0;
  } catch (error) {
    progress?.end();
    return reportFailure(error, io);
  } finally {
    await server?.close();
  }
};

function reportFailure(error: unknown, io: CliIo): number {
  if (error instanceof AmbiguousNamespaceError) {
    io.stderr(`calmops triage: ${error.message}\n`);
    io.stderr('Candidates:\n');
    for (const c of error.candidates) io.stderr(`  -n ${c.namespace}    ${c.why}\n`);
    return 2;
  }
  if (error instanceof UnknownIntentError) {
    io.stderr(`calmops triage: ${error.message}\n`);
    io.stderr('Run `calmops intents` to see what calmops can triage.\n');
    return 2;
  }
  if (
    error instanceof UsageError ||
    error instanceof InvalidNamespaceError ||
    error instanceof InvalidTriageRequestError ||
    error instanceof SnapshotFileError ||
    error instanceof SnapshotFormatError ||
    error instanceof SnapshotServerError ||
    error instanceof KubeconfigError ||
    error instanceof InputFileError
  ) {
    if (error instanceof UsageError) return usageFailure(io, 'triage', error, USAGE);
    io.stderr(`calmops triage: ${error.message}\n`);
    return 2;
  }
  if (error instanceof TemplateValidationError) {
    io.stderr(`calmops triage: a shipped template is invalid: ${error.message}\n`);
    return 1;
  }
  io.stderr(`calmops triage: ${error instanceof Error ? error.message : String(error)}\n`);
  return 1;
}
