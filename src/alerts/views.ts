import { escapeText } from '../mrkdwn/escape.js';
import { redactText } from '../redact/index.js';
import { SWEEP_INTENT } from '../triage/route/index.js';
import { code, context, fitMessage, section, type ThreadMessage, truncate } from '../views/limits.js';
import { type AlertGroup, firingAlerts, type NormalizedAlert } from './group.js';
import type { AlertTarget } from './map.js';
import { safeLink } from './safe-link.js';

/** The messages an alert group posts: the thread root that opens its session, and the updates in that thread. */

/** Labels that name what an alert is about, in the order people look for them. */
const SUBJECT_LABELS = [
  'pod',
  'container',
  'deployment',
  'statefulset',
  'daemonset',
  'job_name',
  'horizontalpodautoscaler',
  'poddisruptionbudget',
  'persistentvolumeclaim',
  'persistentvolume',
  'node',
  'service',
  'name',
] as const;

const SHOWN_ALERTS = 5;

/** Alert text is foreign: credentials out, Slack markup inert. */
function foreign(text: string, max: number): string {
  return escapeText(truncate(redactText(text), max));
}

/** Values that name the exporter that reported the alert (its service or sidecar), not what the alert is about. */
const EXPORTER = /^(kube-state-metrics|kubelet|node-exporter|kube-rbac-proxy(-.+)?)$/;

function subjectOf(alert: NormalizedAlert): string {
  const parts = SUBJECT_LABELS.flatMap((name) => {
    const value = alert.labels[name];
    return value === undefined || value === '' || EXPORTER.test(value) ? [] : [`${name}=${value}`];
  });
  return parts.length === 0 ? '' : ` ${code(foreign(parts.join(' '), 300))}`;
}

function describe(alert: NormalizedAlert): string {
  return alert.annotations['summary'] ?? alert.annotations['description'] ?? alert.annotations['message'] ?? '';
}

function alertLine(alert: NormalizedAlert): string {
  const mark = alert.status === 'firing' ? ':red_circle:' : ':large_green_circle:';
  const text = describe(alert);
  const name = alert.name === '' ? 'an alert without a name' : `*${foreign(alert.name, 200)}*`;
  return `${mark} ${name}${subjectOf(alert)}${text === '' ? '' : ` ${foreign(text, 300)}`}`;
}

function alertList(group: AlertGroup): string {
  const firing = firingAlerts(group);
  const ordered = [...firing, ...group.alerts.filter((a) => a.status !== 'firing')];
  const shown = ordered.slice(0, SHOWN_ALERTS).map(alertLine);
  const hidden = ordered.length - shown.length + group.truncated;
  return [...shown, ...(hidden > 0 ? [`…and ${hidden} more alert(s) in this group`] : [])].join('\n');
}

function counts(group: AlertGroup): string {
  const firing = firingAlerts(group).length + (group.status === 'firing' ? group.truncated : 0);
  const resolved = group.alerts.length - firingAlerts(group).length;
  return `${firing} firing${resolved > 0 ? `, ${resolved} resolved` : ''}`;
}

function sourceLink(group: AlertGroup): string {
  const name = group.source === 'alertmanager' ? 'Alertmanager' : group.source;
  const link = group.link === undefined ? undefined : safeLink(group.link);
  return link === undefined ? `from ${name}` : `from <${link}|${name}>`;
}

/** The top-level message that opens an alert's incident thread. */
export function alertRootView(input: { group: AlertGroup; target: AlertTarget; cluster: string }): ThreadMessage {
  const { group, target } = input;
  const name = target.alert.name === '' ? 'An alert' : foreign(target.alert.name, 200);
  const where = target.namespace === undefined ? 'a namespace still to be found' : code(target.namespace);
  const what =
    target.intent === SWEEP_INTENT
      ? target.via === 'sweep'
        ? 'a check of the whole namespace (no triage template lists this alert, so the evidence decides)'
        : 'a check of the whole namespace (the evidence decides among the causes this alert can have)'
      : code(target.intent);
  const severity = target.severity === undefined ? '' : ` (${foreign(target.severity, 32)})`;
  return fitMessage(
    {
      text: `${name} is firing in ${target.namespace ?? 'a namespace still to be found'} on ${input.cluster}: triage ${target.intent}`,
      blocks: [
        section(`:rotating_light: *${name}*${severity} is firing in ${where} on ${code(escapeText(input.cluster))}`),
        section(alertList(group)),
        section(`:mag: *Triage* ${what}`),
        context(
          `${counts(group)} · ${sourceLink(group)}. Reading the cluster read-only; findings, evidence and next steps follow in this thread, and updates to the alert come here too.`,
        ),
      ],
    },
    'the alert in the sender',
  );
}

/** A repeat or an update of the group, posted into its session's thread. */
export function alertUpdateView(group: AlertGroup): ThreadMessage {
  return fitMessage(
    {
      text: `Alert update: ${counts(group)}`,
      blocks: [section(`:bell: *Alert update* ${sourceLink(group)}: ${counts(group)}`), section(alertList(group))],
    },
    'the alert in the sender',
  );
}

/** Every alert of the group resolved: the fix is judged by a fresh triage, not taken on the alert's word. */
export function alertResolvedView(group: AlertGroup): ThreadMessage {
  return fitMessage(
    {
      text: 'The alert resolved: validating the fix with a fresh triage',
      blocks: [
        section(
          `:large_green_circle: *The alert resolved* ${sourceLink(group)}. calmops checks the cluster again before the incident is closed.`,
        ),
        section(alertList(group)),
      ],
    },
    'the alert in the sender',
  );
}

/** The root when the session could not start, so the channel knows the alert arrived and what to do. */
/** The one thread a storm's groups beyond the cap are listed in, instead of each opening its own. */
export function alertOverflowView(source: string, cap: number): ThreadMessage {
  const text = `More than ${cap} alert sessions are open: further ${source} alert groups are listed in this thread instead of each opening a triage. They open their own when fewer are open and the alert is delivered again.`;
  return { text, blocks: [section(`:rotating_light: *Alert overflow* ${escapeText(text)}`)] };
}

export function alertNotStartedView(reason: string): ThreadMessage {
  return {
    text: `calmops could not start a triage for this alert: ${reason}`,
    blocks: [section(`:warning: calmops could not start a triage for this alert: ${reason}`)],
  };
}
