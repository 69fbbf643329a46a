import type { Runtime } from '@libos/kernel';

/**
 * The sequence number of the newest durable event (0 for an empty store). The runtime API reads events oldest
 * first only, so this reads the kernel's `events` table through a host transaction (read only).
 */
export async function headSeq(rt: Runtime): Promise<number> {
  return rt.transaction(async (scope) => {
    const row = await scope.store
      .selectFrom('events')
      .select((eb) => eb.fn.max('seq').as('head'))
      .executeTakeFirst();
    return Number(row?.head ?? 0);
  });
}
