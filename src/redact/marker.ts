/** What a removed credential is replaced with, everywhere calmops shows or keeps text. */
export const REDACTED = '[REDACTED]';

/** Values that already hide a credential, or never held one: redacting them again would only add noise. */
export function isPlaceholder(value: string): boolean {
  const v = value.trim().toLowerCase();
  if (v === '' || v.includes(REDACTED.toLowerCase().slice(0, -1))) return true;
  if (/^(?:\*+|x{3,}|\.{3}|\u2026|-+)$/.test(v)) return true;
  return PLACEHOLDERS.has(v.replace(/^["'`]|["'`]$/g, ''));
}

const PLACEHOLDERS = new Set([
  '',
  'true',
  'false',
  'null',
  'nil',
  'none',
  'undefined',
  'yes',
  'no',
  'on',
  'off',
  'redacted',
  'hidden',
  'masked',
  'omitted',
  'removed',
  'required',
  'optional',
  'set',
  'unset',
  'present',
  'missing',
  'empty',
  'invalid',
  'expired',
  'valid',
]);
