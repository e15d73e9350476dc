import { isClusterLabel } from '../policy/channel-policy.js';
import { isDns1123Label, SWEEP_INTENT } from '../triage/route/index.js';
import type { TemplateRegistry } from '../triage/templates/index.js';
import { type AlertGroup, firingAlerts, type NormalizedAlert } from './group.js';

/**
 * What an alert group asks calmops to triage: the intent whose template lists the alert's name (the sweep when none
 * does, so an alert calmops has no template for is still looked at, never dropped), the namespace from the
 * `namespace` label and the cluster from the `cluster` label.
 */

export interface AlertTarget {
  intent: string;
  /** How the intent was chosen: a template lists the alert, or nothing does and the sweep runs. */
  via: 'template' | 'sweep';
  /** The alert the target was read from (the first firing one a template lists, else the first firing one). */
  alert: NormalizedAlert;
  /** Absent when the labels name none: the session's first triage locates it from the alert's words. */
  namespace?: string;
  cluster?: string;
  severity?: string;
}

/** Alert name → intent, from the templates' `alerts:` lists (the loader refuses a name two templates list). */
export function alertIntents(templates: TemplateRegistry): ReadonlyMap<string, string> {
  const out = new Map<string, string>();
  for (const template of templates.list()) for (const alert of template.alerts) out.set(alert, template.id);
  return out;
}

/**
 * Alerts whose `namespace` label names where the metric was scraped, not where the fault is: the cluster version
 * operator reports every cluster operator from `openshift-cluster-version`. Their sessions locate the namespace from
 * the alert's words (the operator's name) instead.
 */
const REPORTER_NAMESPACE = new Set(['ClusterOperatorDown', 'ClusterOperatorDegraded', 'ClusterOperatorFlapping']);

function label(alert: NormalizedAlert, group: AlertGroup, name: string): string | undefined {
  const value = alert.labels[name] ?? group.commonLabels[name];
  return value === undefined || value === '' ? undefined : value;
}

/** The intent, namespace and cluster one alert asks for. */
function targetOf(alert: NormalizedAlert, group: AlertGroup, intents: ReadonlyMap<string, string>) {
  const listed = intents.get(alert.name);
  const namespace = REPORTER_NAMESPACE.has(alert.name) ? undefined : label(alert, group, 'namespace');
  const cluster = label(alert, group, 'cluster');
  const severity = label(alert, group, 'severity');
  return {
    intent: listed ?? SWEEP_INTENT,
    via: listed === undefined ? ('sweep' as const) : ('template' as const),
    alert,
    // A label that is not a namespace name (a typo in a rule) is dropped rather than sent to the cluster.
    ...(namespace !== undefined && isDns1123Label(namespace) ? { namespace } : {}),
    ...(cluster !== undefined && isClusterLabel(cluster) ? { cluster } : {}),
    ...(severity === undefined ? {} : { severity }),
  };
}

/**
 * The target of a whole group: its first firing alert that a template lists decides, so a group that mixes a known
 * alert with unknown ones still gets the focused triage; a group of unknown alerts gets the sweep.
 */
export function mapAlertGroup(group: AlertGroup, templates: TemplateRegistry): AlertTarget {
  const intents = alertIntents(templates);
  const firing = firingAlerts(group);
  const candidates = firing.length > 0 ? firing : [...group.alerts];
  const known = candidates.find((a) => intents.has(a.name));
  // The schema requires at least one alert, so a group always has a first one.
  const chosen = known ?? (candidates[0] as NormalizedAlert);
  return targetOf(chosen, group, intents);
}
