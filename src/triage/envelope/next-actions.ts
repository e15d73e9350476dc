import type { TriageTemplate } from '../templates/template-schema.js';
import type { SafetyClassifiedAction } from './envelope.js';
import type { Finding, ResourceRef } from './findings.js';

/**
 * Next actions come from the template's catalogue: an action whose `when` names a finding code (or one of the
 * finding's remediation keys) is offered for that finding's resource; `always` actions close the list. Actions for
 * the top-ranked cause come first. Mutating actions are withheld while the evidence is below threshold, and are
 * offered only for findings that are faults now (medium severity or worse): nothing that changes the cluster is
 * suggested on a guess or for history. Every action carries a rationale: the template's own, or the finding that
 * made it relevant.
 */

export interface NextActionInput {
  /** `id` and `title` only word the rationale of `always` actions. */
  template: Pick<TriageTemplate, 'nextActions'> & Partial<Pick<TriageTemplate, 'id' | 'title'>>;
  namespace: string;
  /** Findings in the order actions should follow (ranked causes first). */
  findings: readonly Finding[];
  allowMutating: boolean;
  limit?: number;
}

const PLACEHOLDER = /\{\{\s*([A-Za-z.]+)\s*\}\}/g;
const ACTIONABLE: ReadonlySet<Finding['severity']> = new Set(['medium', 'high', 'critical']);

/**
 * Fill `{{namespace}}`, `{{resource.name|kind|namespace}}` and `{{owner.name|kind}}` (the entity to change, the
 * resource itself when it has no owner); undefined when a placeholder has no value.
 */
export function renderAction(
  text: string,
  namespace: string,
  resource: ResourceRef | undefined,
  owner: ResourceRef | undefined = resource,
): string | undefined {
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
              : key === 'owner.name'
                ? owner?.name
                : key === 'owner.kind'
                  ? owner?.kind.toLowerCase()
                  : key === 'owner.namespace'
                    ? (owner?.namespace ?? namespace)
                    : undefined;
    if (value === undefined) missing = true;
    return value ?? '';
  });
  return missing ? undefined : out;
}

function because(finding: Finding): string {
  const { kind, name } = finding.resource;
  return `Offered for ${finding.code} on ${kind} ${name} (${finding.severity}, confidence ${Math.round(finding.confidence * 100) / 100}).`;
}

function standing(input: NextActionInput, lead: Finding | undefined): string {
  const intent = input.template.title ?? input.template.id ?? 'this';
  const scope = input.template.title ? `"${intent}"` : intent;
  return lead
    ? `A standard read of every ${scope} triage, pointed at ${lead.resource.kind} ${lead.resource.name}.`
    : `A standard read of every ${scope} triage; nothing faulty was found, so it checks the overall state.`;
}

export function buildNextActions(input: NextActionInput): SafetyClassifiedAction[] {
  const limit = input.limit ?? 8;
  const actions: SafetyClassifiedAction[] = [];
  const commands = new Set<string>();
  const offer = (tpl: TriageTemplate['nextActions'][number], finding: Finding | undefined, fallback: string) => {
    if (actions.length >= limit) return;
    if (tpl.type === 'mutating' && (!input.allowMutating || !finding || !ACTIONABLE.has(finding.severity))) return;
    const resource = finding?.resource;
    const owner = finding?.owner ?? resource;
    const command = renderAction(tpl.command, input.namespace, resource, owner);
    const description = renderAction(tpl.description, input.namespace, resource, owner);
    if (command === undefined || description === undefined || commands.has(command)) return;
    const rationale =
      tpl.rationale === undefined ? undefined : renderAction(tpl.rationale, input.namespace, resource, owner);
    commands.add(command);
    actions.push({ command, type: tpl.type, safety: tpl.safety, description, rationale: rationale || fallback });
  };
  for (const finding of input.findings) {
    const keys = new Set([finding.code, ...finding.remediation]);
    for (const tpl of input.template.nextActions) {
      if (tpl.when !== 'always' && keys.has(tpl.when)) offer(tpl, finding, because(finding));
    }
  }
  const lead = input.findings.find((f) => f.severity !== 'info');
  for (const tpl of input.template.nextActions) {
    if (tpl.when === 'always') offer(tpl, lead, standing(input, lead));
  }
  return actions;
}
