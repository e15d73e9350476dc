import { rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { CaptureError, captureNamespace } from '../cluster/capture.js';
import { formatSnapshot, siblingLogsPath } from '../cluster/snapshot.js';
import type { ClusterReader } from '../cluster/types.js';
import { type NamespaceScope, namespaceAllowed, scopedReader } from './scope.js';

/**
 * The `snapshot` tool: `calmops snapshot` for an assistant. It captures one namespace in scope through the
 * read-only reader (Secrets are never read) and writes it as a new file in the folder the server was given, for
 * `calmops triage --snapshot` or `calmops serve-snapshot` to replay offline. It never overwrites a file, and never
 * writes outside that folder.
 */

export interface SnapshotToolArgs {
  namespace: string;
  /** A file name in the snapshot folder, ending in .yaml or .yml; default `<namespace>-<time>.yaml`. */
  file?: string | undefined;
  logs?: boolean | undefined;
}

export interface SnapshotToolContext {
  reader: ClusterReader;
  scope: NamespaceScope;
  /** The folder snapshots are written to. */
  dir: string;
  deadlineMs: number;
  now: () => Date;
}

export interface SnapshotToolResult {
  file: string;
  logsFile?: string;
  /** Objects captured, by kind. */
  objects: Record<string, number>;
  logs: number;
  warnings: string[];
  /** ConfigMaps are written as they are: someone should look at them before the file is shared. */
  configMaps: string[];
}

class SnapshotToolError extends Error {
  override readonly name = 'SnapshotToolError';
}

/** Lines of each failing pod's log kept, as `calmops snapshot` keeps by default. */
const TAIL_LINES = 200;
const FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.ya?ml$/;

function fileName(args: SnapshotToolArgs, now: Date): string {
  if (args.file === undefined) return `${args.namespace}-${now.toISOString().replace(/[:.]/g, '-')}.yaml`;
  if (basename(args.file) !== args.file || !FILE_NAME.test(args.file)) {
    throw new SnapshotToolError(
      `"${args.file.slice(0, 100)}" is not a snapshot file name: give a plain name ending in .yaml (letters, digits, ".", "-", "_"), no folder; snapshots are written to the server's snapshot folder`,
    );
  }
  return args.file;
}

export async function runSnapshotTool(
  args: SnapshotToolArgs,
  context: SnapshotToolContext,
): Promise<SnapshotToolResult> {
  const verdict = namespaceAllowed(args.namespace, context.scope);
  if (!verdict.allowed) throw new SnapshotToolError(`Not captured: ${verdict.reason}.`);
  const file = join(context.dir, fileName(args, context.now()));
  const withLogs = args.logs !== false;
  const logsFile = withLogs ? siblingLogsPath(file) : undefined;
  let result: Awaited<ReturnType<typeof captureNamespace>>;
  try {
    result = await captureNamespace(scopedReader(context.reader, context.scope), {
      namespace: args.namespace,
      logs: withLogs,
      tailLines: TAIL_LINES,
      deadlineMs: context.deadlineMs,
    });
  } catch (error) {
    if (error instanceof CaptureError) throw new SnapshotToolError(`Not captured: ${error.message}`, { cause: error });
    throw error;
  }
  const written: string[] = [];
  try {
    // `wx`: an existing file is never replaced; a failure part way removes what this call wrote.
    await writeFile(file, formatSnapshot(result.objects), { encoding: 'utf8', flag: 'wx', mode: 0o600 });
    written.push(file);
    if (logsFile !== undefined) {
      await writeFile(logsFile, `${JSON.stringify(result.logs, null, 2)}\n`, {
        encoding: 'utf8',
        flag: 'wx',
        mode: 0o600,
      });
      written.push(logsFile);
    }
  } catch (error) {
    await Promise.all(written.map((path) => rm(path, { force: true })));
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'EEXIST'
        ? 'a file of that name is already there (snapshots never overwrite one); give another "file"'
        : (error as Error).message;
    throw new SnapshotToolError(`Not written: ${reason}`, { cause: error });
  }
  const objects: Record<string, number> = {};
  for (const o of result.objects) objects[o.kind ?? '?'] = (objects[o.kind ?? '?'] ?? 0) + 1;
  return {
    file,
    ...(logsFile === undefined ? {} : { logsFile }),
    objects,
    logs: Object.keys(result.logs).length,
    warnings: result.warnings,
    configMaps: result.configMaps,
  };
}

export function snapshotSummaryText(result: SnapshotToolResult): string {
  const counts = Object.entries(result.objects)
    .map(([kind, n]) => `${kind}: ${n}`)
    .join(', ');
  const lines = [
    `Captured ${counts || 'no objects'} → ${result.file}`,
    result.logsFile === undefined
      ? 'Logs not captured.'
      : `${result.logs} container log(s) → ${result.logsFile}; logs are kept as the cluster returned them: review them before sharing.`,
    `Replay it with: calmops triage "<what is wrong>" --snapshot ${result.file}`,
  ];
  for (const warning of result.warnings) lines.push(`warning: ${warning}`);
  if (result.configMaps.length > 0) {
    lines.push(
      `The snapshot holds ${result.configMaps.length} ConfigMap(s) as they are; review them for credentials before sharing.`,
    );
  }
  return lines.join('\n');
}
