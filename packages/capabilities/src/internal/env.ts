import type { Clock, IdSource, ServiceScope } from '@libos/sdk';
import type { ConstraintRegistry } from '../constraints.js';
import type { OwnerResolvers } from './owner-grants.js';

/** What every engine function shares: injected clock and ids, the constraint registry and the ownership resolvers. */
export interface EngineEnv {
  readonly clock: Clock;
  readonly ids: IdSource;
  readonly registry: ConstraintRegistry;
  /** Resource kinds whose owners hold rights by ownership (implicit `cap_own:` records). */
  readonly owners: OwnerResolvers;
}

/** Records one audit entry (ids, hashes, sizes, labels only). */
export async function audit(
  scope: ServiceScope,
  action: string,
  target: string | undefined,
  decision: string | undefined,
  details: Record<string, unknown>,
): Promise<void> {
  await scope.audit.record({
    action,
    ...(target === undefined ? {} : { target }),
    ...(decision === undefined ? {} : { decision }),
    details,
  });
}
