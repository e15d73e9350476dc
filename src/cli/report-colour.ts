import type { Paint, Style } from './colour.js';

/**
 * The triage report with colour where a glance needs it: severities, the priority, safety labels, and the
 * headings. Only the markers the report itself writes at the start of its lines are styled, never text read from
 * the cluster, so the words and the layout are exactly those of the plain report.
 */

const SEVERITY: Record<string, Style[]> = {
  critical: ['red', 'bold'],
  high: ['red'],
  medium: ['yellow'],
  low: ['cyan'],
  info: ['dim'],
};

const PRIORITY: Record<string, Style[]> = {
  P1: ['red', 'bold'],
  P2: ['red'],
  P3: ['yellow'],
  P4: ['green'],
};

const SAFETY: Record<string, Style[]> = {
  SAFE: ['green'],
  REQUIRES_APPROVAL: ['yellow'],
  DANGEROUS: ['red', 'bold'],
};

const HEADINGS = new Set(['Root cause', 'Findings', 'Evidence', 'Next actions', 'Ask next']);

export function paintTriageReport(report: string, paint: Paint): string {
  const lines = report.split('\n');
  return lines
    .map((line, i) => {
      if (i === 0 && line.startsWith('Triage: ')) return paint(line, 'bold');
      if (HEADINGS.has(line)) return paint(line, 'bold');
      const finding = /^( {2}\[)(critical|high|medium|low|info)(\] )/.exec(line);
      if (finding) {
        const [whole, open, severity, close] = finding as unknown as [string, string, string, string];
        return `${open}${paint(severity, ...(SEVERITY[severity] ?? []))}${close}${line.slice(whole.length)}`;
      }
      const action = /^( {2}\[)(SAFE|REQUIRES_APPROVAL|DANGEROUS)([\],])/.exec(line);
      if (action) {
        const [whole, open, label, close] = action as unknown as [string, string, string, string];
        return `${open}${paint(label, ...(SAFETY[label] ?? []))}${close}${line.slice(whole.length)}`;
      }
      const priority = /^Priority (P[1-4]) \u00b7 /.exec(line);
      if (priority) {
        const level = priority[1] as string;
        return `Priority ${paint(level, ...(PRIORITY[level] ?? []))}${line.slice(`Priority ${level}`.length)}`;
      }
      return line;
    })
    .join('\n');
}
