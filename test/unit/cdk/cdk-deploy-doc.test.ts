import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONTEXT_KEYS } from '../../../cdk/settings.js';
import { PROJECT_ROOT, synthesize } from '../../support/cdk-support.js';

/**
 * docs/deploy.md is walked by people with the stack's outputs beside it: every output and setting it names must
 * exist in what `cdk synth` produces, and everything the stack emits must be in the guide.
 */

const GUIDE = readFileSync(join(PROJECT_ROOT, 'docs', 'deploy.md'), 'utf8');
const CLUSTERS = ['prod', 'staging'];

/** The backticked names in the first column of the table that follows `marker`. */
function firstColumn(marker: string): string[] {
  const start = GUIDE.indexOf(marker);
  expect(start, `docs/deploy.md has "${marker}"`).toBeGreaterThanOrEqual(0);
  const rows = GUIDE.slice(start).split('\n').slice(1);
  const table = rows.slice(rows.findIndex((line) => line.startsWith('|')));
  const body = table
    .slice(
      0,
      table.findIndex((line) => !line.startsWith('|')),
    )
    .slice(2);
  return body.flatMap((line) => [...(line.split('|')[1] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? ''));
}

describe('the deploy guide', () => {
  // Every optional output shows up with these settings.
  const { template } = synthesize(
    {
      clusters: CLUSTERS.join(','),
      alarmEmail: 'oncall@example.com',
      vpcId: 'vpc-0123456789abcdef0',
      subnetIds: 'subnet-0123456789abcdef0,subnet-0123456789abcdef1',
    },
    JSON.stringify({ default: { triage: ['*'] } }),
  );
  const outputs = Object.keys(template.toJSON().Outputs as Record<string, unknown>);

  it('names only outputs the stack has, and every one it has', () => {
    const documented = firstColumn('ends with these outputs').flatMap((name) =>
      name.includes('<cluster>') ? CLUSTERS.map((c) => name.replace('<cluster>', c)) : [name],
    );
    expect(documented.length).toBeGreaterThan(5);
    for (const name of documented) expect(outputs, `output ${name}`).toContain(name);
    for (const name of outputs) expect(documented, `output ${name} is documented`).toContain(name);
  });

  it('documents exactly the settings the app reads', () => {
    const documented = firstColumn('CDK context keys');
    expect([...documented].sort()).toEqual([...CONTEXT_KEYS].sort());
  });

  it('uses only known settings in its commands', () => {
    const used = [...GUIDE.matchAll(/-c ([A-Za-z]+)=/g)].map((m) => m[1]).filter((key) => key !== 'key');
    expect(used.length).toBeGreaterThan(0);
    for (const key of used) expect(CONTEXT_KEYS as readonly string[], `-c ${key}`).toContain(key);
  });
});
