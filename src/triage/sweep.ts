import type { Finding } from './findings.js';
import { SWEEP_INTENT } from './routing.js';
import type { TriageTemplate } from './template.js';
import type { TemplateRegistry } from './templates.js';

/**
 * What a sweep's findings mean in terms of intents. A finding belongs to the intent whose template knows what to
 * do about its code (a next action or a remediation for it); failing that, to the first intent whose template
 * leads with the analyzer that produced it. The envelope of a sweep takes the intent of its top root cause, so a
 * session that began with "something is off" continues as the crashloop or pvc-binding diagnosis it turned out to be.
 */

export function intentOfFinding(
  templates: TemplateRegistry,
  finding: Pick<Finding, 'code' | 'analyzer'>,
): TriageTemplate | undefined {
  const focused = templates.list().filter((t) => t.id !== SWEEP_INTENT);
  const knows = (t: TriageTemplate) =>
    t.nextActions.some((a) => a.when === finding.code) || t.remediation.some((r) => r.when === finding.code);
  return (
    focused.find(knows) ??
    focused.find((t) => t.analyzers[0] === finding.analyzer) ??
    focused.find((t) => t.analyzers.includes(finding.analyzer))
  );
}

/**
 * A sweep offers, for each finding, the next actions the finding's own intent would: the sweep's catalogue is every
 * template's finding-specific actions followed by the sweep's own standing reads.
 */
export function sweepCatalogue(templates: TemplateRegistry, sweep: TriageTemplate): TriageTemplate['nextActions'] {
  const specific = templates
    .list()
    .filter((t) => t.id !== SWEEP_INTENT)
    .flatMap((t) => t.nextActions.filter((a) => a.when !== 'always'));
  return [...specific, ...sweep.nextActions];
}
