import type { Domain } from '../envelope/findings.js';
import type { TemplateRegistry } from '../templates/template-registry.js';

/** One intent as calmops shows it to people and tools: `calmops intents -o json`, the MCP `intents` tool. */
export interface IntentSummary {
  id: string;
  domain: Domain;
  title: string;
  description: string;
  examples: string[];
  relatedDomains: Domain[];
}

/** The intents of a registry, ordered by id, without the template internals (rounds, reads, analyzers). */
export function intentSummaries(templates: TemplateRegistry): IntentSummary[] {
  return templates.list().map((t) => ({
    id: t.id,
    domain: t.domain,
    title: t.title,
    description: t.description,
    examples: [...t.examples],
    relatedDomains: [...t.relatedDomains],
  }));
}
