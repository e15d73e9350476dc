import { describe, expect, it } from 'vitest';
import { planInputFrom } from '../../src/review/input.js';
import { UNKNOWN_NAME_PLACEHOLDERS } from '../../src/review/names.js';
import { guardPlan, type RemediationPlan } from '../../src/review/plan.js';
import { TemplateSynthesizer } from '../../src/review/template-synthesizer.js';
import { loadTemplates } from '../../src/triage/templates/template-registry.js';
import { corpusCases, corpusRun } from './corpus-runs.js';

/**
 * Every incident of the corpus (test/fixtures/incidents/) gets a plan written with its own names: the plan passes
 * the schema guard, names the entity the expert says to change, and uses a placeholder for an object only after a
 * step that looks it up.
 */

const corpus = corpusCases().filter((c) => c.intent !== 'healthy');
const templates = loadTemplates();

async function planFor(slug: string): Promise<{ plan: RemediationPlan; expected: string[] } | string> {
  const c = corpus.find((x) => x.slug === slug);
  if (!c) return 'no case';
  const result = await corpusRun(slug, 'namespace');
  const envelope = result?.envelope;
  if (!envelope) return `no envelope: ${result?.refused ?? 'asked'}`;
  const input = planInputFrom(
    envelope,
    { sessionId: 's', namespace: envelope.routing.namespace, intent: envelope.routing.intent, author: 'U1' },
    templates,
  );
  if (!input) return 'no root cause';
  const guarded = guardPlan(await new TemplateSynthesizer().synthesize(input));
  if (!guarded.ok) return guarded.errors.join('; ');
  return { plan: guarded.plan, expected: (c.rootCause ?? []).map((r) => r.name) };
}

/** Defines the checks, for the file that replays the corpus once for every check on it. */
export function defineCorpusPlanChecks(): void {
  describe('plans for the incident corpus', () => {
    it('name the objects of each incident and look up what the findings do not name', async () => {
      const problems: string[] = [];
      let named = 0;
      for (let i = 0; i < corpus.length; i += 2) {
        const batch = await Promise.all(
          corpus.slice(i, i + 2).map((c) => planFor(c.slug).then((r) => [c.slug, r] as const)),
        );
        for (const [slug, result] of batch) {
          // A triage that names no root cause has no plan to check: the corpus test counts that miss, and here it
          // counts against the share of plans that name the expert's entity.
          if (result === 'no root cause') continue;
          if (typeof result === 'string') {
            problems.push(`${slug}: ${result}`);
            continue;
          }
          const { plan, expected } = result;
          const text = plan.steps.map((s) => `${s.command}\n${s.rollback ?? ''}`).join('\n');
          if (expected.some((name) => text.includes(name))) named += 1;
          plan.steps.forEach((step, index) => {
            for (const placeholder of UNKNOWN_NAME_PLACEHOLDERS) {
              if (!`${step.command}\n${step.rollback ?? ''}`.includes(placeholder)) continue;
              const slot = placeholder.slice(1, -1).replace(/-kind$/, '');
              const lookup = plan.steps.findIndex((s) => s.id === `find-${slot}` || s.id.startsWith(`find-${slot}`));
              const listed = plan.steps.slice(0, index).some((s) => step.needs.includes(s.id) && s.mode === 'read');
              if (!(lookup !== -1 && lookup < index) && !listed) {
                problems.push(`${slug}: step ${index + 1} uses ${placeholder} with no lookup before it`);
              }
            }
          });
          if (
            !plan.steps.some(
              (s) =>
                s.mode === 'read' &&
                /rollout status|get (pvc|node|endpoints|ingress|hpa|pdb)|oc get route|describe resourcequota|get pods/.test(
                  s.command,
                ),
            )
          ) {
            problems.push(`${slug}: no verification step`);
          }
        }
      }
      expect(problems).toEqual([]);
      // The expert's entity to change is named in (nearly) every plan.
      expect(named / corpus.length).toBeGreaterThanOrEqual(0.9);
    }, 240_000);
  });
}
