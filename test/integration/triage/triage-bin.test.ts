import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TriageEnvelopeSchema } from '../../../src/triage/envelope/envelope.js';

/**
 * The installed command: `package.json` names `bin/calmops.js`, and npm links it into `node_modules/.bin`. These
 * tests run it as a user would, in a child process, through such a link.
 */

const root = fileURLToPath(new URL('../../../', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { bin: Record<string, string> };
const fixture = join(root, 'test/fixtures/snapshots/scheduling-failures--insufficient-cpu.yaml');

function exec(file: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // Run from outside the repository, as an installed command is; no npm in between.
    const child = spawn(file, args, { cwd: tmpdir(), env: { ...process.env, NODE_OPTIONS: '' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the calmops command', () => {
  const bin = join(root, pkg.bin.calmops ?? 'missing');
  const linkDir = mkdtempSync(join(tmpdir(), 'calmops-bin-'));
  const link = join(linkDir, 'calmops');
  symlinkSync(bin, link);

  it('runs through the link npm creates, as `calmops intents`, and exits 2 on bad input', async () => {
    const [ok, bad] = await Promise.all([exec(link, ['intents']), exec(link, ['frobnicate'])]);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^scheduling-failures\s+compute\s+/m);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/unknown command "frobnicate"/);
  });

  it('triages a snapshot with `node bin/calmops.js`', async () => {
    const args = [bin, 'triage', 'pods stuck pending in payments', '--snapshot', fixture, '--json'];
    const result = await exec(process.execPath, args);
    expect(result.code).toBe(0);
    const envelope = TriageEnvelopeSchema.parse(JSON.parse(result.stdout));
    expect(envelope.rootCause[0]?.code).toBe('POD_INSUFFICIENT_CPU');
  });
});
