// Imported rather than read at run time: the command-line bundle carries the version it was built from, and the
// bundle is rebuilt when package.json changes, as it is for any file it imports.
import pkg from '../../package.json' with { type: 'json' };

export const CALMOPS_VERSION: string = pkg.version;
