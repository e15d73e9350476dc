import type { SafetyClassifiedAction } from './envelope.js';
import type { Finding, ResourceRef } from './findings.js';
import type { TriageTemplate } from './template.js';

/**
 * Next actions come from the template's catalogue: an action whose `when` names a finding code (or one of the
 * finding's remediation keys) is offered for that finding's resource; `always` actions close the list. Actions for
 * the top-ranked cause come first. Mutating actions are withheld while the evidence is below threshold: nothing
 * that changes the cluster is suggested on a guess.
 */

export interface NextActionInput {
  template: Pick<TriageTemplate, 'nextActions'>;
  namespace: string;
  /** Findings in the order actions should follow (ranked causes first). */
  findings: readonly Finding[];
  allowMutating: boolean;
  limit?: number;
}

const PLACEHOLDER = /\{\{\s*([A-Za-z.]+)\s*\}\}/g;

/** Fill `{{namespace}}` and `{{resource.name|kind|namespace}}`; undefined when a placeholder has no value. */
export function renderAction(text: string, namespace: string, resource: ResourceRef | undefined): string | undefined {
  let missing = false;
  const out = text.replace(PLACEHOLDER, (_m, key: string) => {
    const value =
      key === 'namespace'
        ? namespace
        : key === 'resource.name'
          ? resource?.name
          : key === 'resource.kind'
            ? resource?.kind
            : key === 'resource.namespace'
              ? (resource?.namespace ?? namespace)
              : undefined;
    if (value === undefined) missing = true;
    return value ?? '';
  });
  return missing ? undefined : out;
}

export function buildNextActions(input: NextActionInput): SafetyClassifiedAction[] {
  const limit = input.limit ?? 8;
  const actions: SafetyClassifiedAction[] = [];
  const commands = new Set<string>();
  const offer = (tpl: TriageTemplate['nextActions'][number], resource: ResourceRef | undefined) => {
    if (actions.length >= limit) return;
    if (tpl.type === 'mutating' && !input.allowMutating) return;
    const command = renderAction(tpl.command, input.namespace, resource);
    const description = renderAction(tpl.description, input.namespace, resource);
    if (command === undefined || description === undefined || commands.has(command)) return;
    const rationale = tpl.rationale === undefined ? undefined : renderAction(tpl.rationale, input.namespace, resource);
    commands.add(command);
    actions.push({
      command,
      type: tpl.type,
      safety: tpl.safety,
      description,
      ...(rationale ? { rationale } : {}),
    });
  };
  for (const finding of input.findings) {
    const keys = new Set([finding.code, ...finding.remediation]);
    for (const tpl of input.template.nextActions) {
      if (tpl.when !== 'always' && keys.has(tpl.when)) offer(tpl, finding.resource);
    }
  }
  const lead = input.findings.find((f) => f.severity !== 'info')?.resource;
  for (const tpl of input.template.nextActions) {
    if (tpl.when === 'always') offer(tpl, lead);
  }
  return actions;
}
