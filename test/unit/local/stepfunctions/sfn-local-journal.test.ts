import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ExecutionJournal,
  type JournalRecord,
  journalFileOf,
  prepareStateDir,
  readJournals,
} from '../../../../local/stepfunctions/journal.js';
import { recoverExecution } from '../../../../local/stepfunctions/recovery.js';

const ARN = 'arn:aws:states:us-east-1:000000000000:execution:m:e1';
const TOKEN_A = `AQ${'a'.repeat(64)}`;
const TOKEN_B = `AQ${'b'.repeat(64)}`;
const TOKEN_C = `AQ${'c'.repeat(64)}`;

const start: JournalRecord = {
  t: 'start',
  v: 1,
  arn: ARN,
  name: 'e1',
  stateMachine: 'm',
  input: '{"n":1}',
  startDate: '2030-01-01T00:00:00.000Z',
  seq: 7,
};

function at(second: number): string {
  return new Date(Date.UTC(2030, 0, 1, 0, 0, second)).toISOString();
}

describe('execution journal recovery', () => {
  it('resumes the last entered top-level state with the token and child of that entry only', () => {
    const recovered = recoverExecution({
      file: 'f',
      records: [
        start,
        { t: 'entered', state: 'Ask', input: { round: 1 }, at: at(1) },
        { t: 'token', token: TOKEN_A, state: 'Ask', issuedAt: at(2) },
        { t: 'token-closed', token: TOKEN_A, status: 'succeeded', output: { answer: 1 } },
        { t: 'exited', state: 'Ask', output: { round: 1, answer: 1 }, at: at(3) },
        { t: 'entered', state: 'Ask', input: { round: 2 }, at: at(4) },
        { t: 'token', token: TOKEN_B, state: 'Ask', issuedAt: at(5) },
        { t: 'token-closed', token: TOKEN_B, status: 'abandoned' },
        { t: 'token', token: TOKEN_C, state: 'Ask', issuedAt: at(6) },
        { t: 'token-delivered', token: TOKEN_C },
        { t: 'child', state: 'Ask', arn: 'arn:child' },
      ],
    });
    expect(recovered.status).toBe('RUNNING');
    expect(recovered.resume).toEqual({
      stateName: 'Ask',
      input: { round: 2 },
      enteredAt: new Date(at(4)),
      inProgress: true,
      token: { token: TOKEN_C, stateName: 'Ask', issuedAt: new Date(at(6)), delivered: true },
      childArn: 'arn:child',
    });
    expect(recovered.tokens.map((token) => [token.token, token.closed])).toEqual([
      [TOKEN_A, 'succeeded'],
      [TOKEN_B, 'abandoned'],
      [TOKEN_C, undefined],
    ]);
  });

  it('resumes a state that exited before the next one was journaled, and the start when none was entered', () => {
    const exited = recoverExecution({
      file: 'f',
      records: [
        start,
        { t: 'entered', state: 'Work', input: { a: 1 }, at: at(1) },
        { t: 'exited', state: 'Work', output: { a: 2 }, at: at(2) },
      ],
    });
    expect(exited.resume).toMatchObject({ stateName: 'Work', input: { a: 1 }, inProgress: false });
    const fresh = recoverExecution({ file: 'f', records: [start] });
    expect(fresh.resume).toEqual({ enteredAt: new Date(start.startDate), inProgress: false });
  });

  it('does not resume a closed execution and restores its description and history', () => {
    const recovered = recoverExecution({
      file: 'f',
      records: [
        start,
        { t: 'event', event: { id: 1, previousEventId: 0, timestamp: at(0), type: 'ExecutionStarted' } },
        { t: 'entered', state: 'Work', input: {}, at: at(1) },
        { t: 'close', status: 'FAILED', stopDate: at(9), error: 'Boom', cause: 'why' },
      ],
    });
    expect(recovered).toMatchObject({
      status: 'FAILED',
      stopDate: new Date(at(9)),
      error: 'Boom',
      cause: 'why',
      seq: 7,
      input: '{"n":1}',
    });
    expect(recovered.resume).toBeUndefined();
    expect(recovered.events).toEqual([
      { id: 1, previousEventId: 0, timestamp: new Date(at(0)), type: 'ExecutionStarted' },
    ]);
  });
});

describe('execution journal files', () => {
  const directories: string[] = [];
  afterAll(() => {
    for (const dir of directories) rmSync(dir, { recursive: true, force: true });
  });

  function stateDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'calmops-sfn-journal-'));
    directories.push(dir);
    prepareStateDir(dir);
    return dir;
  }

  it('appends records that read back, owner-only, and ignores appends once closed', () => {
    const dir = stateDir();
    const errors: unknown[] = [];
    const journal = new ExecutionJournal(journalFileOf(dir, ARN), (error) => errors.push(error));
    journal.append(start);
    journal.append({ t: 'entered', state: 'Work', input: { a: 1 }, at: at(1) });
    journal.close();
    journal.append({ t: 'exited', state: 'Work', output: {}, at: at(2) });
    expect(readJournals(dir, (error) => errors.push(error))).toEqual([
      { file: journal.file, records: [start, { t: 'entered', state: 'Work', input: { a: 1 }, at: at(1) }] },
    ]);
    expect(statSync(journal.file).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(errors).toEqual([]);
    journal.remove();
    expect(existsSync(journal.file)).toBe(false);
  });

  it('cuts off a torn last line, skips unreadable lines, and sets aside files that are not journals', () => {
    const dir = stateDir();
    const file = journalFileOf(dir, ARN);
    const entered = { t: 'entered', state: 'Work', input: {}, at: at(1) };
    writeFileSync(file, `${JSON.stringify(start)}\n{"t":"nonsense"}\n${JSON.stringify(entered)}\n{"t":"tok`);
    writeFileSync(join(dir, 'executions', 'junk.jsonl'), '\u0000\u0001garbage\n');
    writeFileSync(join(dir, 'executions', 'empty.jsonl'), '{"t":"sta');
    const errors: Error[] = [];
    const journals = readJournals(dir, (error) => errors.push(error));
    expect(journals).toEqual([{ file, records: [start, entered] }]);
    expect(readFileSync(file, 'utf8').endsWith(`${JSON.stringify(entered)}\n`)).toBe(true);
    expect(readdirSync(join(dir, 'executions')).sort()).toEqual([file.split('/').at(-1), 'junk.jsonl.corrupt'].sort());
    expect(errors).toHaveLength(3);
    expect(errors.map((error) => error.message)).toEqual(
      expect.arrayContaining([
        expect.stringContaining('no start record'),
        expect.stringContaining('Skipped unreadable line(s) 2 '),
        expect.stringContaining('torn last line'),
      ]),
    );
  });
});
