// A named import of the JSON (no import attribute): the build inlines the one field, not the whole package.json.
import { version } from '../package.json';

/** The version of @libos/testing: its package.json's, which changesets writes; the build inlines it. */
export const VERSION: string = version;
