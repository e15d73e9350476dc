import type { ToolClass } from '../state-machine.js';

/** How far a tool class reaches; a compound command is as dangerous as its worst part. */
export const SEVERITY: Record<ToolClass, number> = { read: 0, inspect: 1, write: 2, destructive: 3 };

export const KUBE_PROGRAMS = new Set(['kubectl', 'oc', 'k', 'kubecolor', 'microk8s.kubectl']);
export const WRAPPERS = new Set(['sudo', 'time', 'nohup', 'env', 'watch', 'doas']);

/** The program a word names, without its directory or `.exe` (`/usr/local/bin/kubectl` is kubectl). */
export function programOf(word: string): string {
  const base = word.split('/').pop() ?? word;
  return base.replace(/\.exe$/i, '').toLowerCase();
}
