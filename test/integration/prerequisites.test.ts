import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * `node test/prerequisites.mjs`, the first step of `npm test` and of `.ci/run`, run as a process with a PATH that
 * holds only the programs each case gives it: what is missing is named with the one command that installs it.
 */

const SCRIPT = fileURLToPath(new URL('../prerequisites.mjs', import.meta.url));
const dirs: string[] = [];
const root = process.getuid?.() === 0;

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function binDir(programs: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'calmops-prerequisites-'));
  dirs.push(dir);
  for (const [name, script] of Object.entries(programs)) {
    writeFileSync(join(dir, name), script);
    chmodSync(join(dir, name), 0o755);
  }
  return dir;
}

const TRUE = '#!/bin/sh\nexit 0\n';
const java = (version: string) => `#!/bin/sh\necho 'openjdk version "${version}" 2025-04-15' >&2\n`;
const ALL: Record<string, string> = {
  chromium: TRUE,
  java: java('17.0.15'),
  'prometheus-alertmanager': TRUE,
  kubectl: TRUE,
};
const allBut = (...absent: string[]) =>
  Object.fromEntries(Object.entries(ALL).filter(([name]) => !absent.includes(name)));

function check(path: string, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const run = spawnSync(process.execPath, [SCRIPT, ...args], { env: { PATH: path, ...env }, encoding: 'utf8' });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

const APT_INSTALL = 'apt-get update && apt-get install -y chromium openjdk-17-jre-headless prometheus-alertmanager';

describe('the test prerequisites check', () => {
  it('stops at once on a PATH without the programs, naming each and the one command that installs them', () => {
    const { code, stdout, stderr } = check(binDir({}));
    expect(code).toBe(1);
    expect(stdout).toBe('');
    for (const program of ['chromium', 'java', 'prometheus-alertmanager', 'kubectl']) {
      expect(stderr).toMatch(new RegExp(`^  ${program} +not found on PATH; used by `, 'm'));
    }
    expect(stderr).toContain(root ? `\n  ${APT_INSTALL}\n` : `\n  sudo sh -c '${APT_INSTALL}'\n`);
    // Debian has no kubectl package: the way to get it is the upstream release.
    expect(stderr).toContain("kubectl is not in Debian's archive");
    expect(stderr).toMatch(/https:\/\/dl\.k8s\.io\/release\/.*\/bin\/linux\/\w+\/kubectl/);
  });

  it('passes silently when every program is there', () => {
    expect(check(binDir(ALL))).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('asks only for what is missing, and for no kubectl download when kubectl is there', () => {
    const { code, stderr } = check(binDir(allBut('chromium', 'prometheus-alertmanager')));
    expect(code).toBe(1);
    expect(stderr).toContain('apt-get install -y chromium prometheus-alertmanager');
    expect(stderr).not.toMatch(/^ {2}(java|kubectl) /m);
    expect(stderr).not.toContain('dl.k8s.io');
  });

  it('names a Java older than 17 and asks for the headless JRE 17', () => {
    const { code, stderr } = check(binDir({ ...ALL, java: java('11.0.2') }));
    expect(code).toBe(1);
    expect(stderr).toMatch(/java +\S+\/java is Java 11; 17 or later is needed/);
    expect(stderr).toContain('apt-get install -y openjdk-17-jre-headless');
  });

  it('takes Chromium from CHROMIUM_PATH when it is set', () => {
    const dir = binDir({ ...allBut('chromium'), 'my-chromium': TRUE });
    expect(check(dir, [], { CHROMIUM_PATH: join(dir, 'my-chromium') }).code).toBe(0);
    const { code, stderr } = check(dir, [], { CHROMIUM_PATH: join(dir, 'absent') });
    expect(code).toBe(1);
    expect(stderr).toContain(`CHROMIUM_PATH=${join(dir, 'absent')} is not an executable file`);
  });

  it.runIf(root)('--install apt-gets exactly what is missing, then passes', () => {
    const dir = binDir({ kubectl: TRUE, chromium: TRUE });
    const log = join(dir, 'apt-get.log');
    // An apt-get that records its arguments and "installs" each package's program into the same directory.
    const provides = {
      'openjdk-17-jre-headless': ['java', java('17.0.15')],
      'prometheus-alertmanager': ['prometheus-alertmanager', TRUE],
    };
    writeFileSync(
      join(dir, 'apt-get'),
      `#!${process.execPath}\n` +
        `const fs = require('node:fs');\n` +
        `const args = process.argv.slice(2);\n` +
        `fs.appendFileSync(${JSON.stringify(log)}, args.join(' ') + '\\n');\n` +
        `const provides = ${JSON.stringify(provides)};\n` +
        `if (args[0] === 'install') for (const p of args) if (provides[p]) {\n` +
        `  const file = ${JSON.stringify(dir)} + '/' + provides[p][0];\n` +
        `  fs.writeFileSync(file, provides[p][1]); fs.chmodSync(file, 0o755);\n` +
        `}\n`,
    );
    chmodSync(join(dir, 'apt-get'), 0o755);
    const { code, stderr } = check(dir, ['--install']);
    expect(stderr).toBe('apt-get update -qq\napt-get install -y -qq openjdk-17-jre-headless prometheus-alertmanager\n');
    expect(code).toBe(0);
    expect(readFileSync(log, 'utf8')).toBe(
      'update -qq\ninstall -y -qq openjdk-17-jre-headless prometheus-alertmanager\n',
    );
    // Nothing missing: nothing to install.
    expect(check(dir, ['--install'])).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(readFileSync(log, 'utf8').split('\n')).toHaveLength(3);
  });

  it.runIf(!root)('--install refuses without root, saying how to run it', () => {
    const { code, stderr } = check(binDir({}), ['--install']);
    expect(code).toBe(1);
    expect(stderr).toBe('--install runs apt-get and needs root: sudo node test/prerequisites.mjs --install\n');
  });
});
