import type { DemoClusterView, DemoNamespaceView } from '../../demo/control.js';
import { escapeHtml } from './html.js';

/**
 * The sidebar's "Demo cluster" panel. calmops never changes a cluster: here the person trying the sandbox plays the
 * engineer who runs the approved plan, one namespace at a time, so that "resolved" can be validated.
 */

const STATUS_LABEL: Record<DemoNamespaceView['status'], string> = {
  broken: 'broken',
  fixed: 'fixed',
  healthy: 'healthy',
};

function row(ns: DemoNamespaceView, busy: ReadonlySet<string>): string {
  const name = escapeHtml(ns.namespace);
  const waiting = busy.has(ns.namespace) ? ' disabled' : '';
  const steps = ns.fix?.steps.join('\n') ?? '';
  let control = '';
  if (ns.status === 'broken') {
    control = `<button type="button" class="demo-button demo-fix" data-demo-action="fix" data-namespace="${name}" title="${escapeHtml(
      `Run the fix on the demo cluster:\n${steps}`,
    )}"${waiting}>Run the fix</button>`;
  } else if (ns.status === 'fixed') {
    control = `<button type="button" class="demo-button demo-restore" data-demo-action="restore" data-namespace="${name}" title="Bring the fault back"${waiting}>Restore the fault</button>`;
  }
  const text =
    ns.status === 'fixed' ? (ns.fix?.summary ?? '') : ns.status === 'healthy' ? 'nothing to fix' : ns.problem;
  const detail = `<div class="demo-detail">${escapeHtml(text)}</div>`;
  return `<div class="demo-ns demo-${ns.status}" data-demo-namespace="${name}">
<div class="demo-line"><span class="demo-dot" aria-hidden="true"></span><span class="demo-name">${name}</span><span class="demo-status">${STATUS_LABEL[ns.status]}</span></div>
${detail}${control}</div>`;
}

export function renderDemoPanel(view: DemoClusterView | undefined, busy: ReadonlySet<string> = new Set()): string {
  if (view === undefined) return '';
  if (!view.available) return `<div class="demo-note" data-demo-unavailable>${escapeHtml(view.reason)}</div>`;
  return `<div class="demo-note">Play the engineer who runs the approved plan, then say "resolved" in the thread.</div>${view.namespaces
    .map((ns) => row(ns, busy))
    .join('')}`;
}

/** What the page says after a fix was run or a fault restored. */
export function demoChangeMessage(action: 'fix' | 'restore', ns: DemoNamespaceView, changed: boolean): string {
  if (action === 'fix') {
    if (!changed) return `The fix in ${ns.namespace} was already run.`;
    return `Ran the fix in ${ns.namespace}: ${ns.fix?.summary ?? 'done'}. Say "resolved" in the incident's thread to validate it.`;
  }
  return changed ? `The fault in ${ns.namespace} is back.` : `${ns.namespace} was not fixed; nothing to restore.`;
}
