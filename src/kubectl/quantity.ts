/**
 * Kubernetes resource quantities (`100m`, `1.5`, `128Mi`, `1e3`) read exactly (in nano-units, as BigInt) and printed
 * in the canonical form of resource.Quantity's String(): what `kubectl describe` and `kubectl top` show. Sums keep
 * the format of their first term, as Quantity.Add does.
 */

export interface Quantity {
  /** Nano-units: 1 = 1n, 1000000000 = 1. */
  nanos: bigint;
  binary: boolean;
  /** The value as a number in base units, for fractions and comparisons. */
  value: number;
  text: string;
}

const NANO = 1_000_000_000n;
const DECIMAL: Record<string, bigint> = {
  n: 1n,
  u: 1000n,
  m: 1_000_000n,
  '': NANO,
  k: NANO * 1000n,
  M: NANO * 1_000_000n,
  G: NANO * 1_000_000_000n,
  T: NANO * 1_000_000_000_000n,
  P: NANO * 1_000_000_000_000_000n,
  E: NANO * 1_000_000_000_000_000_000n,
};
const BINARY: Record<string, bigint> = {
  Ki: NANO * 1024n,
  Mi: NANO * 1024n ** 2n,
  Gi: NANO * 1024n ** 3n,
  Ti: NANO * 1024n ** 4n,
  Pi: NANO * 1024n ** 5n,
  Ei: NANO * 1024n ** 6n,
};

function make(nanos: bigint, binary: boolean): Quantity {
  const q = { nanos, binary, value: Number(nanos) / 1e9, text: '' };
  q.text = canonical(q);
  return q;
}

export function parseQuantityExact(text: string): Quantity | undefined {
  const match = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$/.exec(text.trim());
  if (!match || (match[2] === '' && (match[3] ?? '') === '')) return undefined;
  const [, sign, whole = '', frac = '', exp, suffix = ''] = match;
  const binary = suffix in BINARY;
  const unit = binary ? (BINARY[suffix] as bigint) : (DECIMAL[suffix] as bigint);
  const digits = BigInt(`${whole}${frac}` || '0');
  const scale = -frac.length + Number(exp ?? 0);
  let nanos = digits * unit;
  if (scale >= 0) nanos *= 10n ** BigInt(scale);
  else {
    // Round up, as Quantity does when precision is lost below nano.
    const div = 10n ** BigInt(-scale);
    nanos = (nanos + div - 1n) / div;
  }
  return make(sign === '-' ? -nanos : nanos, binary);
}

function canonical(q: Quantity): string {
  const { nanos } = q;
  if (nanos === 0n) return '0';
  const negative = nanos < 0n;
  const abs = negative ? -nanos : nanos;
  const sign = negative ? '-' : '';
  if (q.binary && abs % NANO === 0n && abs >= NANO * 1024n) {
    let units = abs / NANO;
    let index = 0;
    const suffixes = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
    while (units % 1024n === 0n && index < suffixes.length - 1) {
      units /= 1024n;
      index++;
    }
    return `${sign}${units}${suffixes[index]}`;
  }
  // Decimal: the largest exponent (a multiple of 3) that keeps the mantissa whole.
  const suffixes: Array<[bigint, string]> = [
    [NANO * 1_000_000_000_000_000_000n, 'E'],
    [NANO * 1_000_000_000_000_000n, 'P'],
    [NANO * 1_000_000_000_000n, 'T'],
    [NANO * 1_000_000_000n, 'G'],
    [NANO * 1_000_000n, 'M'],
    [NANO * 1000n, 'k'],
    [NANO, ''],
    [1_000_000n, 'm'],
    [1000n, 'u'],
    [1n, 'n'],
  ];
  for (const [unit, suffix] of suffixes) {
    if (abs % unit === 0n) return `${sign}${abs / unit}${suffix}`;
  }
  return `${sign}${abs}n`;
}

/** Canonical text of a quantity as typed; text that is not a quantity is printed as it is. */
export function formatQuantity(text: string): string {
  if (text === '') return text;
  return parseQuantityExact(text)?.text ?? text;
}

export function sumQuantities(texts: readonly string[]): Quantity | undefined {
  let total: Quantity | undefined;
  for (const text of texts) {
    const q = parseQuantityExact(text);
    if (!q) continue;
    total = total === undefined ? q : make(total.nanos + q.nanos, total.binary);
  }
  return total;
}
