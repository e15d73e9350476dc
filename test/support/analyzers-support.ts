import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseSnapshot, parseSnapshotLogs } from '../../src/cluster/snapshot.js';
import type { KubeObject } from '../../src/cluster/types.js';
import { ANALYZERS, contextFromObjects, runAnalyzers } from '../../src/triage/analyze/index.js';
import type { Finding } from '../../src/triage/envelope/findings.js';

const SNAPSHOTS = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'snapshots');

export interface Fixture {
  file: string;
  intent: string;
  rootCause: string;
  evidence: string;
  now: Date;
  namespace: string;
  objects: KubeObject[];
  logs: Record<string, string>;
}

export function loadFixture(file: string): Fixture {
  const text = readFileSync(join(SNAPSHOTS, file), 'utf8');
  const header = /^# expect: intent=(\S+) rootCause=(\S+) evidence=(.*)$/m.exec(text);
  const now = /^# now: (\S+)$/m.exec(text);
  if (!header || !now) throw new Error(`${file}: missing # expect / # now header`);
  const objects = parseSnapshot(text, file);
  const namespace = objects.find((o) => o.kind === 'Namespace')?.metadata.name;
  if (!namespace) throw new Error(`${file}: no Namespace object`);
  const logsFile = join(SNAPSHOTS, file.replace(/\.yaml$/, '.logs.json'));
  const logs = existsSync(logsFile) ? parseSnapshotLogs(readFileSync(logsFile, 'utf8'), logsFile) : {};
  return {
    file,
    intent: header[1]!,
    rootCause: header[2]!,
    evidence: header[3]!.trim(),
    now: new Date(now[1]!),
    namespace,
    objects,
    logs,
  };
}

export function fixtureFiles(): string[] {
  return readdirSync(SNAPSHOTS)
    .filter((f) => f.endsWith('.yaml'))
    .sort();
}

export function analyze(fx: Pick<Fixture, 'namespace' | 'now' | 'objects' | 'logs'>, names?: string[]): Finding[] {
  const ctx = contextFromObjects({ namespace: fx.namespace, now: fx.now, objects: fx.objects, logs: fx.logs });
  const analyzers = names ? names.map((n) => ANALYZERS.get(n)!) : [...ANALYZERS.values()];
  return runAnalyzers(analyzers, ctx);
}
