import { createHash } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  truncateSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { ExecutionJournalError } from './errors.js';

/**
 * The on-disk journal of one execution: an append-only file of JSON lines under `<stateDir>/executions/`.
 * Lines are written with a single write each and the records a restart depends on (start, state entered, task
 * tokens, child executions, close) are fsynced, so a process killed at any point leaves at most a torn last line,
 * which loading cuts off.
 */

const EXECUTIONS_DIR = 'executions';
const JOURNAL_SUFFIX = '.jsonl';
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

const isoDate = z.string().refine((value) => !Number.isNaN(Date.parse(value)), 'an ISO 8601 date');
const closedStatus = z.enum(['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED']);
const tokenClosedStatus = z.enum(['succeeded', 'failed', 'timed-out', 'abandoned']);

const journalRecord = z.discriminatedUnion('t', [
  z.object({
    t: z.literal('start'),
    v: z.literal(1),
    arn: z.string().min(1),
    name: z.string().min(1),
    stateMachine: z.string().min(1),
    input: z.string(),
    startDate: isoDate,
    seq: z.number().int(),
  }),
  z.object({
    t: z.literal('event'),
    event: z.looseObject({
      id: z.number().int(),
      previousEventId: z.number().int(),
      timestamp: isoDate,
      type: z.string(),
    }),
  }),
  // Top-level states only: what a restart resumes from.
  z.object({ t: z.literal('entered'), state: z.string(), input: z.unknown(), at: isoDate }),
  z.object({ t: z.literal('exited'), state: z.string(), output: z.unknown(), at: isoDate }),
  z.object({ t: z.literal('token'), token: z.string(), state: z.string(), issuedAt: isoDate }),
  // The callback task's resource returned: whoever answers the token has been told about it.
  z.object({ t: z.literal('token-delivered'), token: z.string() }),
  z.object({
    t: z.literal('token-closed'),
    token: z.string(),
    status: tokenClosedStatus,
    output: z.unknown().optional(),
    error: z.string().optional(),
    cause: z.string().optional(),
  }),
  z.object({ t: z.literal('child'), state: z.string(), arn: z.string().min(1) }),
  z.object({
    t: z.literal('close'),
    status: closedStatus,
    stopDate: isoDate,
    output: z.string().optional(),
    error: z.string().optional(),
    cause: z.string().optional(),
  }),
]);

export type JournalRecord = z.infer<typeof journalRecord>;
/** How a task token was closed: `abandoned` when its resource failed before anyone answered. */
export type JournalTokenStatus = z.infer<typeof tokenClosedStatus>;

/** Records a restart cannot do without; the others (history events, exits) may be lost with the page cache. */
const DURABLE = new Set<JournalRecord['t']>([
  'start',
  'entered',
  'token',
  'token-delivered',
  'token-closed',
  'child',
  'close',
]);

function executionsDir(stateDir: string): string {
  return join(stateDir, EXECUTIONS_DIR);
}

/** Creates the state directory (owner only) and returns where execution journals live. */
export function prepareStateDir(stateDir: string): string {
  const dir = executionsDir(stateDir);
  mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  // mkdir leaves an existing directory's mode alone; executions carry inputs, outputs and task tokens.
  chmodSync(stateDir, DIR_MODE);
  chmodSync(dir, DIR_MODE);
  return dir;
}

/** The journal file of an execution; names are hashed so any execution name maps to a portable file name. */
export function journalFileOf(stateDir: string, executionArn: string): string {
  const digest = createHash('sha256').update(executionArn).digest('hex').slice(0, 40);
  return join(executionsDir(stateDir), `${digest}${JOURNAL_SUFFIX}`);
}

function syncDirectory(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Not every platform can fsync a directory; the file's own fsync still holds its contents.
  }
}

/** Appends records to one execution's journal. Failures are reported, never thrown into the execution. */
export class ExecutionJournal {
  private fd: number | undefined;
  private closed = false;

  constructor(
    readonly file: string,
    private readonly report: (error: ExecutionJournalError) => void,
  ) {}

  append(record: JournalRecord): void {
    if (this.closed) return;
    try {
      if (this.fd === undefined) {
        const created = !existsSync(this.file);
        this.fd = openSync(this.file, 'a', FILE_MODE);
        if (created) syncDirectory(join(this.file, '..'));
      }
      const bytes = Buffer.from(`${JSON.stringify(record)}\n`, 'utf8');
      let written = 0;
      while (written < bytes.length) {
        written += writeSync(this.fd, bytes, written, bytes.length - written);
      }
      if (DURABLE.has(record.t)) fsyncSync(this.fd);
    } catch (error) {
      this.report(new ExecutionJournalError(`Could not append a '${record.t}' record`, this.file, { cause: error }));
    }
  }

  /** Stops writing; later appends are ignored (the execution was closed or left for the next start). */
  close(): void {
    this.closed = true;
    if (this.fd !== undefined) {
      try {
        closeSync(this.fd);
      } catch {
        // Already closed by the system; nothing left to flush.
      }
      this.fd = undefined;
    }
  }

  remove(): void {
    this.close();
    try {
      unlinkSync(this.file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.report(new ExecutionJournalError('Could not remove the journal', this.file, { cause: error }));
      }
    }
  }
}

export interface JournalFile {
  file: string;
  records: JournalRecord[];
}

/**
 * Reads every journal under the state directory. A torn last line (the process died mid-write) is cut off so
 * later appends start on a fresh line; a line that is not a record is skipped; a file that does not begin with a
 * start record is renamed to `<file>.corrupt` and left out. Each of these is reported.
 */
export function readJournals(stateDir: string, report: (error: ExecutionJournalError) => void): JournalFile[] {
  const dir = prepareStateDir(stateDir);
  const files: JournalFile[] = [];
  for (const entry of readdirSync(dir).sort()) {
    if (!entry.endsWith(JOURNAL_SUFFIX)) continue;
    const file = join(dir, entry);
    const parsed = readJournal(file, report);
    if (parsed) files.push(parsed);
  }
  return files;
}

function readJournal(file: string, report: (error: ExecutionJournalError) => void): JournalFile | undefined {
  let buffer: Buffer;
  try {
    buffer = readFileSync(file);
  } catch (error) {
    report(new ExecutionJournalError('Could not read the journal', file, { cause: error }));
    return undefined;
  }
  const end = buffer.lastIndexOf(0x0a) + 1;
  const records: JournalRecord[] = [];
  const skipped: number[] = [];
  buffer
    .subarray(0, end)
    .toString('utf8')
    .split('\n')
    .forEach((line, index) => {
      if (line.length === 0) return;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        skipped.push(index + 1);
        return;
      }
      const record = journalRecord.safeParse(value);
      if (record.success) {
        records.push(record.data);
      } else {
        skipped.push(index + 1);
      }
    });
  if (end === 0) {
    // The process died while writing the start record: StartExecution never answered, so nothing was lost.
    try {
      unlinkSync(file);
    } catch {
      // Left for the next start to try again.
    }
    return undefined;
  }
  if (records[0]?.t !== 'start') {
    report(new ExecutionJournalError('Not an execution journal (no start record); renamed to .corrupt', file));
    try {
      renameSync(file, `${file}.corrupt`);
    } catch (error) {
      report(new ExecutionJournalError('Could not rename the unreadable journal', file, { cause: error }));
    }
    return undefined;
  }
  if (skipped.length > 0) {
    report(new ExecutionJournalError(`Skipped unreadable line(s) ${skipped.join(', ')}`, file));
  }
  if (end < buffer.length) {
    report(new ExecutionJournalError(`Cut off a torn last line of ${buffer.length - end} bytes`, file));
    try {
      // Appends after a restart must start on a line of their own.
      truncateSync(file, end);
    } catch (error) {
      report(new ExecutionJournalError('Could not cut off the torn last line', file, { cause: error }));
      return undefined;
    }
  }
  return { file, records };
}
