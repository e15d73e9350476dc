import type { SampleAlertResult, SampleAlertsView } from '../sample-alerts.js';
import { escapeHtml } from './html.js';

/**
 * The sidebar's "Alerts" panel: the person trying the sandbox plays Alertmanager. The server sends the alert a demo
 * namespace's fault would raise to calmops' webhook, so the incident thread opens as it would at 4 AM.
 */

/** The namespace the panel acts on: the chosen one while it has a sample, else the first one. */
export function chosenSample(view: SampleAlertsView | undefined, chosen: string): string | undefined {
  if (view === undefined || !view.available) return undefined;
  return (view.samples.find((s) => s.namespace === chosen) ?? view.samples[0])?.namespace;
}

export function renderAlertPanel(view: SampleAlertsView | undefined, chosen: string, busy: boolean): string {
  if (view === undefined) return '';
  if (!view.available) return `<div class="demo-note" data-alerts-unavailable>${escapeHtml(view.reason)}</div>`;
  const current = chosenSample(view, chosen);
  const sample = view.samples.find((s) => s.namespace === current);
  const options = view.samples
    .map((s) => {
      const label = `${s.namespace} · ${s.alertname}`;
      const selected = s.namespace === current ? ' selected' : '';
      return `<option value="${escapeHtml(s.namespace)}"${selected}>${escapeHtml(label)}</option>`;
    })
    .join('');
  const waiting = busy ? ' disabled' : '';
  const since =
    sample?.startsAt === undefined
      ? ''
      : new Date(sample.startsAt).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  const state =
    sample === undefined
      ? ''
      : sample.firing
        ? `${sample.alertname} has been firing in ${sample.namespace} since ${since}`
        : `${sample.alertname} is not firing in ${sample.namespace}`;
  const resolvable = sample?.firing === true && !busy ? '' : ' disabled';
  return `<div class="demo-note">Play Alertmanager: send the alert a namespace's fault raises to calmops' webhook.</div>
<select class="alert-select" id="alert-namespace" aria-label="Sample alert"${waiting}>${options}</select>
<div class="demo-detail alert-state" data-alert-firing="${sample?.firing === true}">${escapeHtml(state)}</div>
<div class="alert-buttons"><button type="button" class="demo-button demo-fix" data-alert-action="firing"${waiting}>Fire a sample alert</button><button type="button" class="demo-button" data-alert-action="resolved" title="Send the alert's resolution: calmops validates the fix with a fresh triage"${resolvable}>Resolve it</button></div>`;
}

/** What the page says after calmops answered the sample notification. */
export function sampleAlertMessage(result: SampleAlertResult, channelName: (id: string) => string | undefined): string {
  const { answer, alertname, namespace } = result;
  const where = answer.channelId === undefined ? 'its thread' : `#${channelName(answer.channelId) ?? answer.channelId}`;
  switch (answer.outcome) {
    case 'opened':
      return `${alertname} fired in ${namespace}: calmops opened an incident thread in ${where} (triage ${answer.intent ?? ''}).`;
    case 'updated':
      return `${alertname} fired again in ${namespace}: calmops posted it in the incident's thread in ${where}.`;
    case 'duplicate':
      return `calmops already had this notification: the same one within a minute is handled once, as for Alertmanager's retries.`;
    case 'validating':
      return `${alertname} resolved in ${namespace}: calmops validates the fix with a fresh triage in the thread in ${where}.`;
    case 'ignored':
      return `${alertname} resolved in ${namespace}, but no incident is open for it: nothing to validate.`;
    default:
      return answer.reason ?? `calmops answered ${answer.outcome ?? 'without an outcome'}.`;
  }
}
