import type { Runtime } from '@libos/kernel';

/** Everything a request could change that a test can see: processes, events, audit, human requests, messages. */
export async function fingerprint(rt: Runtime) {
  const processes = await rt.processes();
  return {
    processes,
    events: (await rt.events({ limit: 10_000 })).map((e) => e.seq),
    audit: (await rt.audit({ limit: 10_000 })).map((a) => a.seq),
    humanRequests: await rt.humanRequests(),
    messages: await Promise.all(processes.map((p) => rt.messages(p.pid))),
  };
}
