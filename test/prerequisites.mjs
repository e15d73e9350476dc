// @ts-check
// The programs the tests run besides what npm installs. `npm test` checks them first and stops at once, naming the
// one command that installs what is missing; `.ci/run` installs them with `--install`. The list lives here alone, so
// what CI installs and what `npm test` asks for cannot drift apart.
//
//   node test/prerequisites.mjs            check; exit 1 with the install command when something is missing
//   node test/prerequisites.mjs --install  as root: apt-get what is missing, then check

import { spawnSync } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The minimum Java for DynamoDB Local, as local/dynamodb/dynamodb-local.ts requires it. */
const JAVA_MAJOR = 17;

/**
 * @typedef {object} Prerequisite
 * @property {string} command   the program, found on PATH
 * @property {string} [envPath] a variable naming the program's path instead
 * @property {string} [aptPackage] the Debian package that installs it
 * @property {string} usedBy    what needs it
 */

/** @type {readonly Prerequisite[]} */
export const PREREQUISITES = [
  {
    command: 'chromium',
    envPath: 'CHROMIUM_PATH',
    aptPackage: 'chromium',
    usedBy: 'the browser tests (test/e2e/*-browser*, sandbox-guided-journeys)',
  },
  {
    command: 'java',
    aptPackage: `openjdk-${JAVA_MAJOR}-jre-headless`,
    usedBy: `DynamoDB Local (Java ${JAVA_MAJOR} or later), the store conformance suite's second backend`,
  },
  {
    command: 'prometheus-alertmanager',
    aptPackage: 'prometheus-alertmanager',
    usedBy: 'the real Alertmanager of test/e2e/alertmanager.test.ts',
  },
  { command: 'kubectl', usedBy: 'kubectl against the snapshot API server (test/integration/snapshot-api)' },
];

const KUBECTL_ARCH = { x64: 'amd64', arm64: 'arm64' };

/**
 * How to get kubectl, which Debian's archive does not package: the upstream release binary.
 * @param {{ root: boolean }} who
 */
export function kubectlInstructions({ root }) {
  const arch = KUBECTL_ARCH[/** @type {keyof typeof KUBECTL_ARCH} */ (process.arch)] ?? process.arch;
  const sudo = root ? '' : 'sudo ';
  return (
    "kubectl is not in Debian's archive; install the upstream release " +
    '(https://kubernetes.io/docs/tasks/tools/install-kubectl-linux/):\n' +
    `  curl -fsSLO "https://dl.k8s.io/release/$(curl -fsSL https://dl.k8s.io/release/stable.txt)/bin/linux/${arch}/kubectl" ` +
    `&& ${sudo}install -m 0755 kubectl /usr/local/bin/kubectl`
  );
}

/**
 * The executable file `command` names: a path as it is, else the first match on PATH.
 * @param {string} command
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {string | undefined}
 */
export function findProgram(command, env = process.env) {
  const candidates = isAbsolute(command)
    ? [command]
    : (env['PATH'] ?? '')
        .split(delimiter)
        .filter((dir) => dir !== '')
        .map((dir) => join(dir, command));
  return candidates.find((file) => {
    try {
      accessSync(file, constants.X_OK);
      return statSync(file).isFile();
    } catch {
      return false;
    }
  });
}

/**
 * Where a prerequisite (by its command) is on this machine, if it is: the tests run it from there.
 * @param {string} command
 * @param {NodeJS.ProcessEnv} [env]
 */
export function locate(command, env = process.env) {
  const envPath = PREREQUISITES.find((p) => p.command === command)?.envPath;
  const named = envPath === undefined ? undefined : env[envPath];
  return findProgram(named !== undefined && named !== '' ? named : command, env);
}

/**
 * The major version `java -version` reports (`openjdk version "17.0.15"`, `java version "1.8.0_392"`).
 * @param {string} java
 * @param {NodeJS.ProcessEnv} env
 */
function javaMajor(java, env) {
  const out = spawnSync(java, ['-version'], { encoding: 'utf8', env, timeout: 30_000 });
  const match = /version "(\d+)(?:\.(\d+))?/.exec(`${out.stderr ?? ''}${out.stdout ?? ''}`);
  if (match === null) return undefined;
  const major = Number(match[1]);
  return major === 1 ? Number(match[2]) : major;
}

/**
 * What is missing, each with the reason.
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {{ prerequisite: Prerequisite, reason: string }[]}
 */
export function missingPrerequisites(env = process.env) {
  /** @type {{ prerequisite: Prerequisite, reason: string }[]} */
  const missing = [];
  for (const prerequisite of PREREQUISITES) {
    const found = locate(prerequisite.command, env);
    if (found === undefined) {
      const where =
        prerequisite.envPath !== undefined && env[prerequisite.envPath]
          ? `${prerequisite.envPath}=${env[prerequisite.envPath]} is not an executable file`
          : 'not found on PATH';
      missing.push({ prerequisite, reason: where });
    } else if (prerequisite.command === 'java') {
      const major = javaMajor(found, env);
      if (major === undefined || major < JAVA_MAJOR) {
        const version = major === undefined ? 'of unknown version' : `${major}`;
        missing.push({ prerequisite, reason: `${found} is Java ${version}; ${JAVA_MAJOR} or later is needed` });
      }
    }
  }
  return missing;
}

/**
 * The message for what is missing: each program and why, then the one command that installs the packaged ones.
 * @param {{ prerequisite: Prerequisite, reason: string }[]} missing
 * @param {{ root: boolean }} who
 */
export function describeMissing(missing, who) {
  const width = Math.max(...missing.map((m) => m.prerequisite.command.length));
  const lines = ['The tests need programs this machine does not have:'];
  for (const { prerequisite, reason } of missing) {
    lines.push(`  ${prerequisite.command.padEnd(width)}  ${reason}; used by ${prerequisite.usedBy}`);
  }
  const packages = missing.flatMap((m) => (m.prerequisite.aptPackage === undefined ? [] : [m.prerequisite.aptPackage]));
  if (packages.length > 0) {
    const install = `apt-get update && apt-get install -y ${packages.join(' ')}`;
    lines.push('Install them with:', who.root ? `  ${install}` : `  sudo sh -c '${install}'`);
  }
  if (missing.some((m) => m.prerequisite.command === 'kubectl')) lines.push(kubectlInstructions(who));
  return `${lines.join('\n')}\n`;
}

/** @param {NodeJS.ProcessEnv} env */
function installMissing(env) {
  const packages = missingPrerequisites(env).flatMap((m) =>
    m.prerequisite.aptPackage === undefined ? [] : [m.prerequisite.aptPackage],
  );
  if (packages.length === 0) return 0;
  const aptEnv = { ...env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', ...packages],
  ]) {
    process.stderr.write(`apt-get ${args.join(' ')}\n`);
    const run = spawnSync('apt-get', args, { env: aptEnv, stdio: ['ignore', 'ignore', 'inherit'] });
    if (run.error !== undefined || run.status !== 0) {
      process.stderr.write(`apt-get ${args[0]} failed${run.error ? `: ${run.error.message}` : ''}\n`);
      return 1;
    }
  }
  return 0;
}

function main() {
  const root = process.getuid?.() === 0;
  const install = process.argv.includes('--install');
  if (install && !root) {
    process.stderr.write('--install runs apt-get and needs root: sudo node test/prerequisites.mjs --install\n');
    return 1;
  }
  if (install && installMissing(process.env) !== 0) return 1;
  const missing = missingPrerequisites(process.env);
  if (missing.length === 0) return 0;
  process.stderr.write(describeMissing(missing, { root }));
  return 1;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) process.exitCode = main();
