import { badRequest } from './status.js';
import type { IncludeObject } from './tables.js';

/**
 * Query parameters read the way kube-apiserver reads them: a malformed value is a 400 naming the parameter, never a
 * silently ignored option.
 */

export function isTrue(value: string | null): boolean {
  return value === 'true' || value === '1';
}

export function optionalString<K extends string>(key: K, value: string | null): { [P in K]?: string } {
  return (value ? { [key]: value } : {}) as { [P in K]?: string };
}

export function optionalInt<K extends string>(key: K, value: string | null): { [P in K]?: number } {
  if (value === null || value === '') return {};
  if (!/^-?\d+$/.test(value)) throw badRequest(`${key}: invalid value "${value}": must be an integer`);
  return { [key]: Number(value) } as { [P in K]?: number };
}

export function includeObject(value: string | null): IncludeObject {
  if (value === null || value === '') return 'Metadata';
  if (value === 'None' || value === 'Metadata' || value === 'Object') return value;
  throw badRequest(`includeObject: unsupported value "${value}", supported values: "None", "Metadata", "Object"`);
}
