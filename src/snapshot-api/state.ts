import type { SnapshotLogs } from '../cluster/snapshot.js';
import type { StoredObject } from '../cluster/stored-object.js';
import type { KubeObject, ResourceKind } from '../cluster/types.js';
import { buildCatalog, type SnapshotCatalog } from './catalog.js';
import type { RequestVerb } from './faults.js';
import type { ContinueContext } from './paging.js';

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  verb: RequestVerb | 'other';
  resource?: string;
  namespace?: string;
  /** The HTTP status sent; undefined while pending, for hung requests, or when the connection was reset. */
  status?: number;
}

export interface SnapshotStateOptions {
  objects: readonly (KubeObject | StoredObject)[];
  logs?: SnapshotLogs;
  /** The clock for ages in Table output; the catalog picks the newest timestamp in the snapshot when omitted. */
  now?: Date;
  continueTtlMs?: number;
}

const MAX_SELECTIONS = 64;

/**
 * What one snapshot server's handlers share: the snapshot being served, the list selections cached for its pages,
 * the requests seen, and the timers that must not outlive the server. Handlers receive it rather than closing over
 * it, so each route can live in its own module.
 */
export class SnapshotState {
  private current: SnapshotCatalog;
  private currentLogs: SnapshotLogs;
  // The objects a list query selects, kept for the pages that follow: a list of thousands is read in several pages,
  // each asking the same query again. Bounded, since every new selector is a new entry; emptied with the catalog.
  private selections = new Map<string, readonly StoredObject[]>();
  private recorded: RecordedRequest[] = [];
  private received = 0;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly now: Date | undefined;
  readonly continueContext: ContinueContext;

  constructor(options: SnapshotStateOptions) {
    this.now = options.now;
    this.current = buildCatalog(options.objects, this.now ? { now: this.now } : {});
    this.currentLogs = options.logs ?? {};
    this.continueContext = {
      resourceVersion: this.current.resourceVersion,
      ...(options.continueTtlMs !== undefined ? { ttlMs: options.continueTtlMs } : {}),
      now: () => Date.now(),
    };
  }

  get catalog(): SnapshotCatalog {
    return this.current;
  }

  get logs(): SnapshotLogs {
    return this.currentLogs;
  }

  /** Serve another snapshot from now on; continue tokens and cached selections of the old one stop applying. */
  replace(objects: readonly (KubeObject | StoredObject)[], logs: SnapshotLogs | undefined): void {
    const next = buildCatalog(objects, this.now ? { now: this.now } : {});
    // A replaced snapshot must never share a resourceVersion with the one before it: watchers and continue
    // tokens that hold the old version would otherwise be served the new objects as if nothing had changed.
    const version = Math.max(Number(next.resourceVersion) || 1, Number(this.current.resourceVersion) || 1) + 1;
    this.current = { ...next, resourceVersion: String(version) };
    this.selections = new Map();
    this.currentLogs = logs ?? {};
    this.continueContext.resourceVersion = this.current.resourceVersion;
  }

  /** The objects a list query selects, computed by `select` only the first time the same query is asked. */
  selection(
    resource: ResourceKind,
    namespace: string | undefined,
    labelSelector: string,
    fieldSelector: string,
    select: () => readonly StoredObject[],
  ): readonly StoredObject[] {
    const key = JSON.stringify([resource, namespace ?? null, labelSelector, fieldSelector]);
    let selected = this.selections.get(key);
    if (selected === undefined) {
      selected = select();
      if (this.selections.size >= MAX_SELECTIONS) this.selections.clear();
      this.selections.set(key, selected);
    }
    return selected;
  }

  /** Counts a request as it arrives, before anything about it is known. */
  countRequest(): void {
    this.received += 1;
  }

  record(request: RecordedRequest): void {
    this.recorded.push(request);
  }

  requestCount(): number {
    return this.received;
  }

  requests(): readonly RecordedRequest[] {
    return this.recorded;
  }

  resetRequests(): void {
    this.recorded = [];
    this.received = 0;
  }

  /** Runs `action` after `ms`, unless the server closes first. */
  after(ms: number, action: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      action();
    }, ms);
    this.timers.add(timer);
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.after(ms, resolve));
  }

  /** Drops every pending timer: delayed requests and open watches are cut off by closing their connections. */
  clearTimers(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
