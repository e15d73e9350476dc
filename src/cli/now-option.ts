import { UsageError } from './io.js';
import { shown } from './text.js';

/**
 * `--now`: the instant a triage judges at. It must be a real calendar date, and near the data it judges, because
 * ages and "recent" are measured from it: a year away from the snapshot, every event is stale or in the future.
 */

/** How far `--now` may be from the newest timestamp of a snapshot (or from the clock, for a live cluster). */
export const NOW_WINDOW_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;
/** Nothing Kubernetes wrote is older than its first release. */
const EARLIEST = Date.UTC(2014, 5, 6);

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** A date (`2025-01-31`, midnight UTC) or a time with a zone (`2025-01-31T09:30:00Z`); anything else is refused. */
export function parseNowOption(flag: string, text: string): Date {
  const value = text.trim();
  const match = ISO.exec(value);
  const example = '(for example 2025-01-31T09:30:00Z)';
  if (!match) throw new UsageError(`${flag}: not an ISO time: ${shown(text, 60)} ${example}`);
  const [year, month, dayOfMonth, hour, minute, second] = match.slice(1, 7).map((part) => Number(part ?? 0));
  const calendar = new Date(Date.UTC(year ?? 0, (month ?? 0) - 1, dayOfMonth ?? 0));
  const real =
    calendar.getUTCFullYear() === year &&
    calendar.getUTCMonth() + 1 === month &&
    calendar.getUTCDate() === dayOfMonth &&
    (hour ?? 0) < 24 &&
    (minute ?? 0) < 60 &&
    (second ?? 0) < 60;
  const date = new Date(match[4] === undefined ? `${value}T00:00:00Z` : value);
  if (!real || Number.isNaN(date.getTime())) {
    throw new UsageError(`${flag}: "${shown(text, 60)}" is not a real date and time ${example}`);
  }
  return date;
}

function instant(date: Date): string {
  return date.toISOString().replace(/\.000Z$/, 'Z');
}

/** What `--now` is compared with. */
export type NowReference =
  /** A snapshot, by its newest timestamp; undefined when it carries none. */
  | { snapshotNewest: Date | undefined }
  /** A live cluster: its data is as of the clock. */
  | { live: true };

/**
 * Refuse a `--now` far from what it judges: within the window of a snapshot's newest timestamp, or of the clock for
 * a live cluster. A snapshot without any timestamp can only be held to the plausible: after 2014, not in the future
 * beyond the window.
 */
export function checkNowWindow(flag: string, now: Date, reference: NowReference, clock: Date): void {
  const window = NOW_WINDOW_DAYS * DAY_MS;
  const away = (from: Date) => Math.abs(now.getTime() - from.getTime()) > window;
  const leaveOut = 'Leave --now out to judge at';
  if ('live' in reference) {
    if (away(clock)) {
      throw new UsageError(
        `${flag} ${instant(now)} is more than ${NOW_WINDOW_DAYS} days from the clock (${instant(clock)}), and a live ` +
          `cluster's data is as of now; ages and recent events would be judged against the wrong time. ${leaveOut} ` +
          'the newest timestamp read',
      );
    }
    return;
  }
  const newest = reference.snapshotNewest;
  if (newest !== undefined) {
    if (away(newest)) {
      throw new UsageError(
        `${flag} ${instant(now)} is more than ${NOW_WINDOW_DAYS} days from the snapshot's newest timestamp ` +
          `(${instant(newest)}); ages and recent events would be judged against the wrong time. ${leaveOut} the ` +
          'moment the snapshot was taken',
      );
    }
    return;
  }
  if (now.getTime() > clock.getTime() + window || now.getTime() < EARLIEST) {
    throw new UsageError(
      `${flag} ${instant(now)} is not a time this snapshot can be judged at: it carries no timestamp to compare ` +
        `with, and ${flag} must be after 2014 and no more than ${NOW_WINDOW_DAYS} days ahead of the clock ` +
        `(${instant(clock)})`,
    );
  }
}
