import type { Right } from '@libos/sdk';
import type { IssueSpec } from '../../capability-record.js';
import type { AuthorityCheckOptions } from '../../engine.js';
import type { AuthorityDecision } from '../../decision.js';
import type { CapabilityRecord } from '../../capability-record.js';
import type { TestStore } from './test-store.js';

export const A = 'pid_000000000000000a';
export const B = 'pid_000000000000000b';
export const C = 'pid_000000000000000c';
export const D = 'pid_000000000000000d';

/** Short wrappers that run one engine call in its own transaction. */
export function ops(s: TestStore) {
  return {
    grant: (spec: IssueSpec, issuer = 'host'): Promise<CapabilityRecord> => s.run((scope) => s.engine.issueTrusted(scope, spec, issuer)),
    check: (pid: string, resource: string, right: Right, opts?: AuthorityCheckOptions): Promise<AuthorityDecision> =>
      s.run((scope) => s.engine.authority(scope, pid).check(resource, right, opts)),
    require: (
      pid: string,
      resource: string,
      right: Right,
      opts?: AuthorityCheckOptions & { consume?: boolean },
    ): Promise<AuthorityDecision> => s.run((scope) => s.engine.authority(scope, pid).require(resource, right, opts)),
    get: (id: string): Promise<CapabilityRecord | null> => s.run((scope) => s.engine.get(scope, id)),
    list: (pid: string, includeInactive = false): Promise<CapabilityRecord[]> =>
      s.run((scope) => s.engine.list(scope, pid, { includeInactive })),
  };
}
