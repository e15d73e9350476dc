import { statSync } from 'node:fs';
import {
  type LoadedSnapshot,
  loadSnapshotFiles,
  type ParsedSnapshotCache,
  SnapshotFileError,
  SnapshotFormatError,
  siblingLogsPath,
} from '../cluster/snapshot.js';
import { defaultSnapshotCacheDir, snapshotCacheIn } from '../cluster/snapshot-cache.js';
import { UsageError } from './io.js';
import { shown } from './text.js';

/**
 * Files the command line reads whole (snapshots, their logs, kubeconfigs) are checked before a byte is read: they
 * must be regular files (not a FIFO or `/dev/zero`, which never end) and no larger than a limit, so a wrong or
 * hostile path fails at once with its name instead of filling memory. Anything a snapshot's parser throws is
 * reported as that file's fault.
 */

export const DEFAULT_MAX_INPUT_BYTES = 256 * 1024 * 1024;
/** Node cannot hold a text file much larger than this as one string anyway. */
const MAX_INPUT_BYTES_CEILING = 2 * 1024 * 1024 * 1024;

/** An input file that is not read: too large, or not a regular file. Exit code 2. */
export class InputFileError extends Error {
  override readonly name = 'InputFileError';
}

const UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/** `--max-bytes`: a whole number of bytes, or with a K/M/G suffix (binary: 512M is 512 MiB). */
export function parseByteSize(flag: string, text: string): number {
  const match = /^(\d+)\s*([kmg]?)(?:i?b)?$/i.exec(text.trim());
  const unit = match ? UNITS[(match[2] ?? '').toLowerCase()] : undefined;
  const value = match && unit !== undefined ? Number(match[1]) * unit : Number.NaN;
  if (!Number.isSafeInteger(value) || value < 1 || value > MAX_INPUT_BYTES_CEILING) {
    throw new UsageError(
      `${flag}: expected a size from 1 byte to 2G, like 300000000 or 512M, got "${shown(text, 40)}"`,
    );
  }
  return value;
}

function describeBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return mib >= 1 ? `${Number.isInteger(mib) ? mib : mib.toFixed(1)} MiB` : `${bytes} bytes`;
}

/**
 * Check one input file by its metadata. A file that does not exist passes: the reader of the file reports that in
 * its own words.
 */
export function checkInputFile(path: string, what: string, maxBytes: number): void {
  let stats: ReturnType<typeof statSync>;
  try {
    stats = statSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new InputFileError(`cannot read ${what} file ${shown(path)}: ${(error as Error).message}`, { cause: error });
  }
  if (stats.isDirectory()) throw new InputFileError(`cannot read ${what} file ${shown(path)}: is a directory`);
  if (!stats.isFile()) {
    throw new InputFileError(`${what} file ${shown(path)} is not a regular file (a device, FIFO or socket); not read`);
  }
  if (stats.size > maxBytes) {
    throw new InputFileError(
      `${what} file ${shown(path)} is ${describeBytes(stats.size)}, over the ${describeBytes(maxBytes)} limit for ` +
        'an input file; not read (raise the limit with --max-bytes)',
    );
  }
}

/**
 * A snapshot and its logs, each checked first; any parse failure names the snapshot file and exits 2. A snapshot
 * replayed again is read from the parsed-snapshot cache (src/cluster/snapshot-cache.ts) instead of parsed.
 */
export async function loadSnapshotInput(
  snapshotPath: string,
  logsPath: string | undefined,
  maxBytes: number,
  cache: ParsedSnapshotCache = snapshotCacheIn(defaultSnapshotCacheDir()),
): Promise<LoadedSnapshot> {
  checkInputFile(snapshotPath, 'snapshot', maxBytes);
  checkInputFile(logsPath ?? siblingLogsPath(snapshotPath), 'logs', maxBytes);
  try {
    return await loadSnapshotFiles(snapshotPath, logsPath, cache);
  } catch (error) {
    if (error instanceof SnapshotFileError || error instanceof SnapshotFormatError) throw error;
    // The parser's own limits (an alias bomb, nesting deeper than the stack) surface as plain errors; they are
    // still a property of the file.
    const reason = error instanceof Error ? error.message : String(error);
    throw new SnapshotFormatError(`${shown(snapshotPath)}: not a readable snapshot: ${reason}`, { cause: error });
  }
}
