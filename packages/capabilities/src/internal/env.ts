import type { Clock, IdSource, ServiceScope } from '@libos/sdk';
import type { ConstraintRegistry } from '../constraints.js';

/** What every engine function shares: injected clock and ids, and the constraint registry. */
export interface EngineEnv {
  readonly clock: Clock;
  readonly ids: IdSource;
  readonly registry: ConstraintRegistry;
}

/** Records one audit entry (ids, hashes, sizes, labels only). */
export async function audit(scope: ServiceScope, action: string, target: string | undefined, decision: string | undefined, details: Record<string, unknown>): Promise<void> {
  await scope.audit.record({ action, ...(target === undefined ? {} : { target }), ...(decision === undefined ? {} : { decision }), details });
}
