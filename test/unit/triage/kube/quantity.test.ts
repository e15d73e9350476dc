import { describe, expect, it } from 'vitest';
import { parseQuantity } from '../../../../src/triage/kube/quantity.js';

describe('log and message classifiers', () => {
  it('parses Kubernetes quantities', () => {
    expect(parseQuantity('500m')).toBe(0.5);
    expect(parseQuantity('128Mi')).toBe(128 * 2 ** 20);
    expect(parseQuantity('1G')).toBe(1e9);
    expect(parseQuantity('1e3')).toBe(1000);
    expect(parseQuantity('lots')).toBeUndefined();
  });
});
