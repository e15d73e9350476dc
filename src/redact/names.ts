/**
 * Whether a field, variable or flag name announces a credential: `DB_PASS`, `client_secret`, `X-Api-Key`,
 * `AccountKey`, `client-key-data`, `"auth"`. The decision is made on the name's words (split at separators and
 * camelCase), and on its last meaningful word, so `secretName`, `token_ttl` and `password_file` (which name a
 * credential but do not hold one) stay readable while `password_hash` and `SECRET_KEY_BASE` do not.
 */

/** Words after the credential word that still mean "this is the value": `client-key-data`, `token_b64`. */
const VALUE_SUFFIXES = new Set([
  'data',
  'value',
  'val',
  'b64',
  'base64',
  'enc',
  'encrypted',
  'hash',
  'hashed',
  'raw',
  'plain',
  'plaintext',
  'str',
  'string',
  'text',
  'literal',
  'bytes',
  'hex',
  'base',
]);

/** A last word that is a credential on its own, optionally glued to a prefix (`dbpassword`, `csrftoken`). */
const CREDENTIAL_WORD =
  /^(?:[a-z0-9]*(?:password|passwd|passphrase|secret|token|apikey|accesskey|secretkey|privatekey|accountkey|credentials?|cookie)\d*|pass\d*|pw|auth|sig|signature|requirepass|masterauth|masterpass)$/;

/** `*_key` is a credential when the word before says what kind: `api_key`, `AccountKey`, `tls.key`. */
const KEY_QUALIFIERS = new Set([
  'api',
  'access',
  'secret',
  'private',
  'signing',
  'sign',
  'encryption',
  'encrypt',
  'decryption',
  'master',
  'account',
  'client',
  'license',
  'licence',
  'auth',
  'ssh',
  'crypto',
  'hmac',
  'app',
  'shared',
  'storage',
  'subscription',
  'service',
  'webhook',
  'session',
  'jwt',
  'root',
  'admin',
  'consumer',
  'tls',
  'ssl',
  'gpg',
  'pgp',
  'cipher',
  'aes',
  'rsa',
  'deploy',
  'instrumentation',
]);

/** Upper-case `FOO_KEY` variables are credentials unless the word before names a lookup key. */
const LOOKUP_KEY_QUALIFIERS = new Set([
  'public',
  'partition',
  'sort',
  'cache',
  'primary',
  'foreign',
  'idempotency',
  'object',
  'hash',
  'range',
  'lookup',
  'map',
  'group',
  'dedupe',
  'dedup',
  'shard',
  'row',
  'index',
  'label',
  'trace',
  'request',
  'message',
  'event',
  'bucket',
  'file',
  'config',
  'metric',
  'node',
  'id',
  'name',
  'cursor',
  'sequence',
  'kms',
]);

/**
 * Every credential name holds one of these letters in a row; one test of a short pattern settles the great majority
 * of names (`level`, `msg`, `ts`) before the name is split into words.
 */
const MAY_NAME_CREDENTIAL = /pass|pw|secret|token|key|auth|cred|cookie|sig|cert/i;
const MAY_NAME_KEY = /key/i;

/** Split at separators and camelCase humps: `AWSSecretAccessKey` → aws, secret, access, key. */
export function nameWords(name: string): string[] {
  return name
    .split(/[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/)
    .filter((w) => w !== '')
    .map((w) => w.toLowerCase());
}

function meaningfulWords(name: string): string[] {
  const words = nameWords(name);
  while (words.length > 1 && VALUE_SUFFIXES.has(words.at(-1) as string)) words.pop();
  return words;
}

/**
 * `stripe_key`, `integration_key`: a key of some vendor or purpose this list does not know. Whether it is a
 * credential depends on the value (see `isCredentialLike`), unlike `cache_key` or `partition_key`.
 */
export function isVendorKeyName(name: string): boolean {
  if (!MAY_NAME_KEY.test(name)) return false;
  const words = meaningfulWords(name);
  const previous = words.at(-2);
  return words.at(-1) === 'key' && previous !== undefined && !LOOKUP_KEY_QUALIFIERS.has(previous);
}

export function isSensitiveName(name: string): boolean {
  if (!MAY_NAME_CREDENTIAL.test(name)) return false;
  const words = meaningfulWords(name);
  const last = words.at(-1);
  if (last === undefined) return false;
  const previous = words.at(-2);
  if (CREDENTIAL_WORD.test(last)) return true;
  if (last === 'pwd') return true;
  if ((last === 'certificate' || last === 'cert') && previous === 'client') return true;
  if (last !== 'key' || previous === undefined) return false;
  if (KEY_QUALIFIERS.has(previous)) return true;
  return /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/.test(name) && !LOOKUP_KEY_QUALIFIERS.has(previous);
}
