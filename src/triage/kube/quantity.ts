import { quantityValue } from '../../cluster/quantity.js';

/** A quantity read from an object's field (text, or already a number); undefined for anything that is not one. */
export function parseQuantity(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  return quantityValue(value);
}

export function formatBytes(bytes: number): string {
  const units = ['', 'Ki', 'Mi', 'Gi', 'Ti'];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  const rounded = Math.round(value * 10) / 10;
  return `${rounded}${units[unit]}`;
}

export function formatCpu(cores: number): string {
  return cores < 1 || !Number.isInteger(cores) ? `${Math.round(cores * 1000)}m` : String(cores);
}

/** JVM-style sizes in -Xmx flags: 512m, 1g, 2048k. */
export function parseJvmSize(value: string): number | undefined {
  const match = /^(\d+)([kKmMgGtT]?)$/.exec(value);
  if (match === null) return undefined;
  const power = { '': 0, k: 1, m: 2, g: 3, t: 4 }[(match[2] ?? '').toLowerCase()] ?? 0;
  return Number(match[1]) * 1024 ** power;
}
