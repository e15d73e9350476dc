import type { ClusterReader, GetQuery, KubeObject, ListQuery, LogQuery } from '../cluster/types.js';

/** The specialist spent its reads; what it did not get to is reported as not read. */
export class ReadBudgetExhaustedError extends Error {
  override readonly name = 'ReadBudgetExhaustedError';
}

/**
 * The specialist's own read budget over the read-only reader. Analyzers share it, and one read asked twice (two
 * analyzers listing the namespace's pods) is made once.
 */
export class BudgetedReader {
  private used = 0;
  private readonly memo = new Map<string, Promise<unknown>>();

  constructor(
    private readonly reader: ClusterReader,
    readonly limit: number,
    private readonly signal?: AbortSignal,
  ) {}

  get spent(): number {
    return this.used;
  }

  private once<T>(key: string, read: () => Promise<T>): Promise<T> {
    const known = this.memo.get(key);
    if (known) return known as Promise<T>;
    if (this.used >= this.limit) {
      return Promise.reject(new ReadBudgetExhaustedError(`the specialist's ${this.limit} reads are spent`));
    }
    this.used += 1;
    const pending = read();
    this.memo.set(key, pending);
    return pending;
  }

  list(query: ListQuery): Promise<KubeObject[]> {
    return this.once(`list:${JSON.stringify(query)}`, () => this.reader.list(query, this.signal));
  }

  get(query: GetQuery): Promise<KubeObject> {
    return this.once(`get:${JSON.stringify(query)}`, () => this.reader.get(query, this.signal));
  }

  logs(query: LogQuery): Promise<string> {
    return this.once(`logs:${JSON.stringify(query)}`, () => this.reader.logs(query, this.signal));
  }
}
