/**
 * What `calmops doctor` answers: one entry per check, each pass or fail, and for a failure what to do about it.
 * The same object is printed as text for a person or as JSON (`-o json`) for a script.
 */

/** `skip`: the check cannot be made from here; the detail says how to make it by hand. It is not a failure. */
type CheckStatus = 'pass' | 'fail' | 'skip';

export interface CheckResult {
  /** What was checked: `slack-token`, `slack-secret`, `kubeconfig`, `rbac`, `policy`, `policy-references`. */
  check: string;
  /** What it was checked on: a secret name, a cluster, a policy file. */
  target: string;
  status: CheckStatus;
  /** What was found, in one line. */
  detail: string;
  /** For a failure: the next step that fixes it. */
  fix?: string;
}

export interface DoctorReport {
  ok: boolean;
  checks: CheckResult[];
}

export const pass = (check: string, target: string, detail: string): CheckResult => ({
  check,
  target,
  status: 'pass',
  detail,
});

export const fail = (check: string, target: string, detail: string, fix: string): CheckResult => ({
  check,
  target,
  status: 'fail',
  detail,
  fix,
});

export const skip = (check: string, target: string, detail: string): CheckResult => ({
  check,
  target,
  status: 'skip',
  detail,
});

export function report(checks: CheckResult[]): DoctorReport {
  return { ok: checks.every((c) => c.status !== 'fail'), checks };
}

/** One line per check, the fix indented under a failure, and a closing count. */
export function formatReport(result: DoctorReport): string {
  const width = Math.max(...result.checks.map((c) => `${c.check} ${c.target}`.length), 10);
  const lines: string[] = [];
  for (const c of result.checks) {
    lines.push(`${c.status.toUpperCase()}  ${`${c.check} ${c.target}`.padEnd(width)}  ${c.detail}`);
    if (c.fix !== undefined) lines.push(`      ${' '.repeat(width)}  fix: ${c.fix}`);
  }
  const failed = result.checks.filter((c) => c.status === 'fail').length;
  lines.push(
    '',
    failed === 0 ? `All ${result.checks.length} checks passed.` : `${failed} of ${result.checks.length} checks failed.`,
  );
  return `${lines.join('\n')}\n`;
}
