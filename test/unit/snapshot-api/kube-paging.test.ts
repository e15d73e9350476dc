import { describe, expect, it } from 'vitest';
import { type ContinueContext, decodeContinue, encodeContinue, paginate } from '../../../src/snapshot-api/paging.js';
import { ApiStatusError } from '../../../src/snapshot-api/status.js';

const keys = Array.from({ length: 25 }, (_, i) => `shop/pod-${String(i).padStart(2, '0')}`);
const ctx = (over: Partial<ContinueContext> = {}): ContinueContext => ({
  resourceVersion: '42',
  now: () => 1_000_000,
  ...over,
});
const self = (k: string): string => k;

function statusOf(fn: () => unknown): { code: number; reason: string } {
  try {
    fn();
  } catch (error) {
    if (error instanceof ApiStatusError) return { code: error.code, reason: error.reason };
    throw error;
  }
  throw new Error('expected an ApiStatusError');
}

describe('paginate', () => {
  it('returns everything without a limit, or with limit 0', () => {
    expect(paginate(ctx(), keys, self, {}).items).toEqual(keys);
    expect(paginate(ctx(), keys, self, { limit: 0 })).toEqual({ items: keys });
  });

  it('walks every item exactly once, in order, across pages', () => {
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = paginate(ctx(), keys, self, { limit: 10, ...(token ? { continueToken: token } : {}) });
      seen.push(...page.items);
      token = page.continueToken;
      pages += 1;
      if (token) expect(page.remaining).toBe(keys.length - seen.length);
    } while (token);
    expect(seen).toEqual(keys);
    expect(pages).toBe(3);
  });

  it('has no continue token when the page holds the rest', () => {
    const page = paginate(ctx(), keys, self, { limit: 25 });
    expect(page.continueToken).toBeUndefined();
    expect(page.remaining).toBeUndefined();
  });

  it('resumes after the last key even when that item is gone from the next list', () => {
    const first = paginate(ctx(), keys, self, { limit: 5 });
    const shrunk = keys.filter((k) => k !== 'shop/pod-04' && k !== 'shop/pod-05');
    const second = paginate(ctx(), shrunk, self, { limit: 5, continueToken: first.continueToken as string });
    expect(second.items[0]).toBe('shop/pod-06');
  });

  it('issues opaque tokens that decode only on the same snapshot', () => {
    const token = encodeContinue(ctx(), 'shop/pod-03');
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeContinue(ctx(), token)).toBe('shop/pod-03\u0000');
  });

  it('answers a malformed token with 400 BadRequest, like kube-apiserver', () => {
    expect(statusOf(() => paginate(ctx(), keys, self, { limit: 5, continueToken: 'not-a-token' }))).toEqual({
      code: 400,
      reason: 'BadRequest',
    });
  });

  it('answers a token from another snapshot with 410 Expired', () => {
    const foreign = encodeContinue(ctx({ resourceVersion: '7' }), 'shop/pod-03');
    expect(statusOf(() => paginate(ctx(), keys, self, { limit: 5, continueToken: foreign }))).toEqual({
      code: 410,
      reason: 'Expired',
    });
  });

  it('expires tokens older than the configured lifetime', () => {
    let clock = 1_000;
    const timed = ctx({ ttlMs: 500, now: () => clock });
    const token = paginate(timed, keys, self, { limit: 5 }).continueToken as string;
    clock += 400;
    expect(paginate(timed, keys, self, { limit: 5, continueToken: token }).items[0]).toBe('shop/pod-05');
    clock += 200;
    expect(statusOf(() => paginate(timed, keys, self, { limit: 5, continueToken: token })).code).toBe(410);
  });
});
