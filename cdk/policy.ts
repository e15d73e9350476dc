import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { PolicyError, parsePolicy } from '../src/policy/channel-policy.js';
import { loadTemplates } from '../src/triage/templates/index.js';
import { readYaml } from '../src/yaml-text.js';

/**
 * The channel policy is validated at synth time, with the Slack app's own rules (src/policy/channel-policy.ts) and the
 * shipped intents, so a typo fails `cdk deploy` on the operator's machine instead of every Slack request in
 * production. On top, every cluster the policy names must be one this stack deploys a kubeconfig secret for.
 */

export class PolicyFileError extends Error {
  override readonly name = 'PolicyFileError';
}

/** Read, parse (YAML or JSON) and validate a policy file; returns it as compact JSON for CALMOPS_POLICY_JSON. */
export function loadPolicyFile(file: string, clusters: readonly string[]): string {
  const path = resolve(file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (cause) {
    throw new PolicyFileError(`cannot read the policy file ${path} (context policyFile)`, { cause });
  }
  let raw: unknown;
  try {
    raw = readYaml(text) ?? {};
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new PolicyFileError(`the policy file ${path} is not valid YAML or JSON: ${reason}`, { cause });
  }
  try {
    parsePolicy(raw, { knownIntents: loadTemplates().ids(), source: path });
  } catch (cause) {
    if (cause instanceof PolicyError) throw new PolicyFileError(cause.message, { cause });
    throw cause;
  }
  const unknown = referencedClusters(raw).filter((name) => !clusters.includes(name));
  if (unknown.length > 0) {
    throw new PolicyFileError(
      `the policy file ${path} names cluster(s) ${unknown.join(', ')}, but the stack deploys ${clusters.join(', ')}; ` +
        'add them to context clusters (each gets a kubeconfig secret) or fix the policy',
    );
  }
  // The document as written: the functions parse it again with the same rules and apply the same defaults.
  return JSON.stringify(raw);
}

/** Cluster names in `defaults.cluster` and `channels.*.cluster` (the schema has accepted the shape already). */
function referencedClusters(raw: unknown): string[] {
  const doc = raw as { defaults?: { cluster?: string }; channels?: Record<string, { cluster?: string }> };
  const names = [doc.defaults?.cluster, ...Object.values(doc.channels ?? {}).map((c) => c.cluster)];
  return [...new Set(names.filter((n): n is string => typeof n === 'string'))];
}
