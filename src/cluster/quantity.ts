/**
 * Kubernetes resource quantities (`500m`, `1.5`, `128Mi`, `2G`, `1e3`) as plain numbers in base units: cores for CPU,
 * bytes for memory. Enough to compare and sort them; `kubectl/quantity.ts` reads them exactly when they are printed.
 */

const SUFFIX: Readonly<Record<string, number>> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
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

const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$/;

/** The value of a quantity written as text; undefined for text that is not one. */
export function quantityValue(text: string): number | undefined {
  const match = QUANTITY.exec(text.trim());
  if (match === null) return undefined;
  const factor = SUFFIX[match[2] ?? ''];
  if (factor === undefined) return undefined;
  return Number(match[1]) * factor;
}
