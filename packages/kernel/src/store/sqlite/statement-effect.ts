// The classifier moved to `store/statement-effect.ts` (both dialects use it); this path stays for the SQLite files.
export { statementEffect, type StatementEffect } from '../statement-effect.js';
