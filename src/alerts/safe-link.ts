import { isSensitiveName, redactText } from '../redact/index.js';

/**
 * A sender's link without what would let anyone in: no `user:password@`, no parameter whose name announces a
 * credential (`?token=`, `&access_token=`). A link that still holds anything redaction would remove is not shown.
 */
export function safeLink(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  const sensitive = [...url.searchParams.keys()].filter((name) => isSensitiveName(name));
  let text = raw;
  if (url.username !== '' || url.password !== '' || sensitive.length > 0) {
    url.username = '';
    url.password = '';
    for (const name of sensitive) url.searchParams.delete(name);
    text = url.toString();
  }
  return redactText(text) === text && !/[<>|]/.test(text) ? text : undefined;
}
