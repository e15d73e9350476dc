/**
 * Go's sort.Sort (pattern-defeating quicksort, insertion sort under 13 elements), so that items kubectl sorts with
 * equal keys (events seen at the same second, rows without the sorted field) come out in the order kubectl prints
 * them. Sorts in place and returns the array.
 */

type Less<T> = (a: T, b: T) => boolean;

export function goSort<T>(items: T[], less: Less<T>): T[] {
  const n = items.length;
  if (n <= 1) return items;
  const data = {
    less: (i: number, j: number) => less(items[i] as T, items[j] as T),
    swap: (i: number, j: number) => {
      const t = items[i] as T;
      items[i] = items[j] as T;
      items[j] = t;
    },
  };
  pdqsort(data, 0, n, 32 - Math.clz32(n));
  return items;
}

interface Data {
  less(i: number, j: number): boolean;
  swap(i: number, j: number): void;
}

const INCREASING = 1;
const DECREASING = 2;

function insertionSort(data: Data, a: number, b: number): void {
  for (let i = a + 1; i < b; i++) {
    for (let j = i; j > a && data.less(j, j - 1); j--) data.swap(j, j - 1);
  }
}

function siftDown(data: Data, lo: number, hi: number, first: number): void {
  let root = lo;
  for (;;) {
    let child = 2 * root + 1;
    if (child >= hi) return;
    if (child + 1 < hi && data.less(first + child, first + child + 1)) child++;
    if (!data.less(first + root, first + child)) return;
    data.swap(first + root, first + child);
    root = child;
  }
}

function heapSort(data: Data, a: number, b: number): void {
  const first = a;
  const hi = b - a;
  for (let i = Math.floor((hi - 1) / 2); i >= 0; i--) siftDown(data, i, hi, first);
  for (let i = hi - 1; i >= 0; i--) {
    data.swap(first, first + i);
    siftDown(data, 0, i, first);
  }
}

function pdqsort(data: Data, aIn: number, bIn: number, limitIn: number): void {
  let a = aIn;
  let b = bIn;
  let limit = limitIn;
  let wasBalanced = true;
  let wasPartitioned = true;
  for (;;) {
    const length = b - a;
    if (length <= 12) {
      insertionSort(data, a, b);
      return;
    }
    if (limit === 0) {
      heapSort(data, a, b);
      return;
    }
    if (!wasBalanced) {
      breakPatterns(data, a, b);
      limit--;
    }
    let [pivot, hint] = choosePivot(data, a, b);
    if (hint === DECREASING) {
      reverseRange(data, a, b);
      pivot = b - 1 - (pivot - a);
      hint = INCREASING;
    }
    if (wasBalanced && wasPartitioned && hint === INCREASING && partialInsertionSort(data, a, b)) return;
    if (a > 0 && !data.less(a - 1, pivot)) {
      a = partitionEqual(data, a, b, pivot);
      continue;
    }
    const [mid, already] = partition(data, a, b, pivot);
    wasPartitioned = already;
    const leftLen = mid - a;
    const rightLen = b - mid;
    const threshold = Math.floor(length / 8);
    if (leftLen < rightLen) {
      wasBalanced = leftLen >= threshold;
      pdqsort(data, a, mid, limit);
      a = mid + 1;
    } else {
      wasBalanced = rightLen >= threshold;
      pdqsort(data, mid + 1, b, limit);
      b = mid;
    }
  }
}

function partition(data: Data, a: number, b: number, pivot: number): [number, boolean] {
  data.swap(a, pivot);
  let i = a + 1;
  let j = b - 1;
  while (i <= j && data.less(i, a)) i++;
  while (i <= j && !data.less(j, a)) j--;
  if (i > j) {
    data.swap(j, a);
    return [j, true];
  }
  data.swap(i, j);
  i++;
  j--;
  for (;;) {
    while (i <= j && data.less(i, a)) i++;
    while (i <= j && !data.less(j, a)) j--;
    if (i > j) break;
    data.swap(i, j);
    i++;
    j--;
  }
  data.swap(j, a);
  return [j, false];
}

function partitionEqual(data: Data, a: number, b: number, pivot: number): number {
  data.swap(a, pivot);
  let i = a + 1;
  let j = b - 1;
  for (;;) {
    while (i <= j && !data.less(a, i)) i++;
    while (i <= j && data.less(a, j)) j--;
    if (i > j) break;
    data.swap(i, j);
    i++;
    j--;
  }
  return i;
}

function partialInsertionSort(data: Data, a: number, b: number): boolean {
  let i = a + 1;
  for (let step = 0; step < 5; step++) {
    while (i < b && !data.less(i, i - 1)) i++;
    if (i === b) return true;
    if (b - a < 50) return false;
    data.swap(i, i - 1);
    if (i - a >= 2) {
      for (let j = i - 1; j >= 1; j--) {
        if (!data.less(j, j - 1)) break;
        data.swap(j, j - 1);
      }
    }
    if (b - i >= 2) {
      for (let j = i + 1; j < b; j++) {
        if (!data.less(j, j - 1)) break;
        data.swap(j, j - 1);
      }
    }
  }
  return false;
}

const MASK64 = (1n << 64n) - 1n;

function breakPatterns(data: Data, a: number, b: number): void {
  const length = b - a;
  if (length < 8) return;
  let random = BigInt(length);
  const modulus = 2 ** (32 - Math.clz32(length));
  const start = a + Math.floor(length / 4) * 2 - 1;
  for (let idx = start; idx <= start + 2; idx++) {
    random ^= (random << 13n) & MASK64;
    random ^= random >> 7n;
    random ^= (random << 17n) & MASK64;
    let other = Number(random & BigInt(modulus - 1));
    if (other >= length) other -= length;
    data.swap(idx, a + other);
  }
}

function choosePivot(data: Data, a: number, b: number): [number, number] {
  const l = b - a;
  const swaps = { n: 0 };
  let i = a + Math.floor(l / 4);
  let j = a + Math.floor(l / 4) * 2;
  let k = a + Math.floor(l / 4) * 3;
  if (l >= 8) {
    if (l >= 50) {
      i = median(data, i - 1, i, i + 1, swaps);
      j = median(data, j - 1, j, j + 1, swaps);
      k = median(data, k - 1, k, k + 1, swaps);
    }
    j = median(data, i, j, k, swaps);
  }
  if (swaps.n === 0) return [j, INCREASING];
  if (swaps.n === 12) return [j, DECREASING];
  return [j, 0];
}

function median(data: Data, aIn: number, bIn: number, cIn: number, swaps: { n: number }): number {
  let a = aIn;
  let b = bIn;
  let c = cIn;
  const order = (x: number, y: number): [number, number] => {
    if (data.less(y, x)) {
      swaps.n++;
      return [y, x];
    }
    return [x, y];
  };
  [a, b] = order(a, b);
  [b, c] = order(b, c);
  [a, b] = order(a, b);
  return b;
}

function reverseRange(data: Data, a: number, b: number): void {
  for (let i = a, j = b - 1; i < j; i++, j--) data.swap(i, j);
}
