/** Order statistics the benchmarks report, over samples in any order. */

function sorted(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/** The middle sample (of two, the upper); NaN when there is none. */
export function median(values: readonly number[]): number {
  return sorted(values)[Math.floor(values.length / 2)] ?? Number.NaN;
}

/** Nearest rank: the smallest sample with at least p % of the samples at or below it; NaN when there is none. */
export function percentile(values: readonly number[], p: number): number {
  const rank = Math.ceil((p / 100) * values.length);
  return sorted(values)[Math.min(values.length - 1, Math.max(0, rank - 1))] ?? Number.NaN;
}
