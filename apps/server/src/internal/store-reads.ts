import type { Runtime } from '@libos/kernel';

/** The sequence number of the newest durable event (0 for an empty store). */
export function headSeq(rt: Runtime): Promise<number> {
  return rt.lastEventSeq();
}
