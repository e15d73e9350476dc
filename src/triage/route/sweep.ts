import type { Finding } from '../envelope/findings.js';
import type { TemplateRegistry } from '../templates/template-registry.js';
import type { ReadSpec, TriageTemplate } from '../templates/template-schema.js';

/**
 * What a sweep's findings mean in terms of intents. A finding belongs to the intent whose template knows what to
 * do about its code (a next action or a remediation for it); failing that, to the first intent whose template
 * leads with the analyzer that produced it. The envelope of a sweep takes the intent of its top root cause, so a
 * session that began with "something is off" continues as the crashloop or pvc-binding diagnosis it turned out to be.
 */

export const SWEEP_INTENT = 'namespace-sweep';

export function intentOfFinding(
  templates: TemplateRegistry,
  finding: Pick<Finding, 'code' | 'analyzer'>,
  preferred?: string,
): TriageTemplate | undefined {
  const focused = templates.list().filter((t) => t.id !== SWEEP_INTENT);
  const knows = (t: TriageTemplate) =>
    t.nextActions.some((a) => a.when === finding.code) || t.remediation.some((r) => r.when === finding.code);
  const asked = preferred === undefined ? undefined : templates.get(preferred);
  if (asked && asked.id !== SWEEP_INTENT && asked.analyzers.includes(finding.analyzer)) return asked;
  return (
    focused.find((t) => t.analyzers[0] === finding.analyzer && knows(t)) ??
    focused.find((t) => t.analyzers.includes(finding.analyzer) && knows(t)) ??
    focused.find(knows) ??
    focused.find((t) => t.analyzers[0] === finding.analyzer) ??
    focused.find((t) => t.analyzers.includes(finding.analyzer))
  );
}

/**
 * Each finding is offered the next actions its own intent would offer: the catalogue is every template's
 * finding-specific actions, with the standing reads of the template that ran.
 */
export function actionCatalogue(
  templates: TemplateRegistry,
  lead: TriageTemplate,
  swept: boolean,
): TriageTemplate['nextActions'] {
  const specific = templates
    .list()
    .filter((t) => t.id !== SWEEP_INTENT)
    .flatMap((t) => t.nextActions.filter((a) => a.when !== 'always'));
  // The template that ran leads; every finding, whatever its intent, still gets its own intent's actions.
  return swept ? [...specific, ...lead.nextActions] : [...lead.nextActions, ...specific];
}

/**
 * A focused template with the sweep alongside: the intent's own deeper reads, plus the namespace read that lets the
 * evidence overrule the words (the "route 503" that is really a dead node). Rounds run side by side, so the step
 * budget counts rounds, not templates; a read both would send is sent once. Completeness is judged by the focused
 * template's evidence, which is what the person asked about.
 */
export function withSweep(focused: TriageTemplate, sweep: TriageTemplate): TriageTemplate {
  const signature = (r: ReadSpec, renamed: (id: string) => string) =>
    JSON.stringify([
      r.kind,
      r.scope,
      r.namespace ?? '',
      r.name ?? '',
      r.labelSelector ?? '',
      r.fieldSelector ?? '',
      r.container ?? '',
      r.previous,
      r.forEach ? [renamed(r.forEach.read), r.forEach.where, r.forEach.each] : '',
    ]);
  const alias = new Map<string, string>();
  const rename = (id: string) => alias.get(id) ?? `sweep-${id}`;
  const count = Math.max(focused.rounds.length, sweep.rounds.length);
  const rounds: TriageTemplate['rounds'] = [];
  for (let i = 0; i < count; i++) {
    const own = focused.rounds[i]?.reads ?? [];
    const known = new Map(own.map((r) => [signature(r, (id) => id), r.id]));
    const added: ReadSpec[] = [];
    for (const r of sweep.rounds[i]?.reads ?? []) {
      const same = known.get(signature(r, rename));
      if (same !== undefined) {
        alias.set(r.id, same);
        continue;
      }
      const id = `sweep-${r.id}`;
      alias.set(r.id, id);
      added.push({ ...r, id, ...(r.forEach ? { forEach: { ...r.forEach, read: rename(r.forEach.read) } } : {}) });
    }
    rounds.push({
      name: focused.rounds[i]?.name ?? sweep.rounds[i]?.name ?? `round ${i + 1}`,
      reads: [...own, ...added],
    });
  }
  return {
    ...focused,
    rounds,
    analyzers: [...new Set([...focused.analyzers, ...sweep.analyzers])],
  };
}
