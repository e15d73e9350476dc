/**
 * Kubernetes resource quantities (`500m`, `1.5`, `128Mi`, `2G`, `1e3`) as plain numbers: cores for CPU, bytes for
 * memory. Enough to compare requests, limits and allocatable; not a general-purpose arbitrary-precision parser.
 */

const SUFFIX: Readonly<Record<string, number>> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  K: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|K|M|G|T|P|E)?$/;

/** Parse a quantity; undefined for anything that is not one. */
export function parseQuantity(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = QUANTITY.exec(value.trim());
  if (match === null) return undefined;
  const factor = SUFFIX[match[2] ?? ''];
  if (factor === undefined) return undefined;
  return Number(match[1]) * factor;
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
