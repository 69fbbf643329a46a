import { LibosError, canonicalSha256, type DataLabels, type ServiceScope } from '@libos/sdk';
import { completeLabels, parseLabels } from '../data-labels.js';
import { checkEgress, DEFAULT_SINK_RULES, validateSinkRules, type EgressDecision, type SinkRule } from '../egress.js';
import { loadHighWater, storeHighWater } from '../flow.js';
import { parseResource } from '../resource.js';
import { authorizeIn, auditDecision, spendDecision } from './authorize.js';
import { audit, type EngineEnv } from './env.js';
import { T, dbOf, parseJsonColumn, readThrough, type Db } from './store.js';
import type { EgressRequest, DeclassifyReceipt } from '../engine-requests.js';

export type { EgressRequest, DeclassifyReceipt } from '../engine-requests.js';

const GENERATION_KEY = 'sink_registry_generation';

/** The stored sink registry (defaults until the host writes one) and its generation. */
export function loadSinkRegistry(db: Db): Promise<{ rules: readonly SinkRule[]; generation: number }> {
  return readThrough(db, [T.meta, T.sinkRules], 'sink-registry', () => readSinkRegistry(db));
}

async function readSinkRegistry(db: Db): Promise<{ rules: readonly SinkRule[]; generation: number }> {
  const gen = (await db.selectFrom(T.meta).select('value').where('key', '=', GENERATION_KEY).executeTakeFirst()) as
    | { value: string }
    | undefined;
  if (!gen) return { rules: DEFAULT_SINK_RULES, generation: 0 };
  const rows = (await db.selectFrom(T.sinkRules).select('rule').orderBy('pattern').execute()) as { rule: string }[];
  return { rules: rows.map((r) => parseJsonColumn<SinkRule>(r.rule, 'cap_sink_rules.rule')), generation: Number(gen.value) };
}

/** Replaces the registry: needs `admin` on `data_flow_sink_registry:*` (or the host); bumps the generation. */
export async function setSinkRulesImpl(env: EngineEnv, scope: ServiceScope, actor: string, rules: readonly SinkRule[]): Promise<number> {
  const db = dbOf(scope);
  validateSinkRules(rules);
  if (actor !== 'host') {
    const d = await authorizeIn(env, db, actor, 'data_flow_sink_registry:*', 'admin', { operation: 'data_flow.set_sink_rules' });
    await auditDecision(scope, d);
    if (!d.allowed)
      throw new LibosError('permission_denied', `${actor} may not change the sink registry: needs admin on data_flow_sink_registry:*`, {
        details: { resource: 'data_flow_sink_registry:*' },
      });
    await spendDecision(env, scope, db, actor, d);
  }
  const { generation } = await loadSinkRegistry(db);
  const next = generation + 1;
  const now = env.clock.now().toISOString();
  await db.deleteFrom(T.sinkRules).execute();
  for (const r of rules)
    await db
      .insertInto(T.sinkRules)
      .values({ pattern: r.pattern, rule: JSON.stringify(r), updated_at: now })
      .execute();
  if (generation === 0)
    await db
      .insertInto(T.meta)
      .values({ key: GENERATION_KEY, value: String(next) })
      .execute();
  else
    await db
      .updateTable(T.meta)
      .set({ value: String(next) })
      .where('key', '=', GENERATION_KEY)
      .where('value', '=', String(generation))
      .execute();
  await audit(scope, 'data_flow.sink_registry', undefined, 'replaced', {
    actor,
    generation: next,
    ruleCount: rules.length,
    rulesSha256: canonicalSha256(rules),
  });
  return next;
}

/** The facts a one-shot data release is bound to (also the value of its `data_release_binding` constraint). */
export function releaseBinding(
  pid: string,
  sink: string,
  labels: DataLabels,
  payloadSha256: string,
  generation: number,
): Record<string, string | number> {
  return { pid, sink: parseResource(sink).canonical, labelsSha256: canonicalSha256(labels), payloadSha256, generation };
}

/** Clearance for `pid` sending data to a sink; spends a matching bound release when one is needed. Audited, payload-free. */
export async function egressImpl(
  env: EngineEnv,
  scope: ServiceScope,
  pid: string,
  req: EgressRequest,
): Promise<EgressDecision & { readonly releaseCapId?: string; readonly generation: number }> {
  const db = dbOf(scope);
  const labels = req.labels ? completeLabels(parseLabels(req.labels, { allowMixed: true })) : (await loadHighWater(db, pid)).labels;
  const { rules, generation } = await loadSinkRegistry(db);
  let out: EgressDecision & { releaseCapId?: string; generation: number } = {
    ...checkEgress(labels, req.sink, rules, req.sinkIdentitySha256 === undefined ? {} : { sinkIdentitySha256: req.sinkIdentitySha256 }),
    generation,
  };
  if (out.decision === 'release_required' && req.payloadSha256 !== undefined) {
    const binding = releaseBinding(pid, out.sink, labels, req.payloadSha256, generation);
    const d = await authorizeIn(env, db, pid, `data_release:${out.sink}`, 'approve', { operation: 'data_flow.release', release: binding });
    if (
      d.allowed &&
      d.consumeId &&
      d.constraintResults.some((c) => c.capId === d.selectedId && c.key === 'data_release_binding' && c.status === 'pass')
    ) {
      await spendDecision(env, scope, db, pid, d);
      out = { ...out, decision: 'allow', reason: `released once by ${d.selectedId}`, releaseCapId: d.consumeId };
    }
  }
  await audit(scope, 'data_flow.decision', out.sink, out.decision, {
    pid,
    sink: out.sink,
    rule: out.rule,
    trustLevel: out.trustLevel,
    reason: out.reason,
    labels,
    labelsSha256: out.labelsSha256,
    payloadSha256: req.payloadSha256 ?? null,
    generation,
    releaseCapId: out.releaseCapId ?? null,
  });
  return Object.freeze(out);
}

function declassResource(target: string): { resource: string; pid?: string } {
  const t = target.trim();
  if (t.startsWith('process:')) return { resource: `declassification:${t}`, pid: t.slice('process:'.length) };
  if (t.startsWith('object:')) return { resource: `declassification:${t}` };
  if (t.includes(':'))
    throw new LibosError('invalid_arguments', `target: ${t} must be an object id, object:<oid> or process:<pid>`, {
      details: { field: 'target' },
    });
  return { resource: `declassification:object:${t}` };
}

/**
 * Declassify/endorse: only through `admin` on `declassification:object:<oid>` (or `declassification:process:<pid>`);
 * finite grants are consumed. Never reachable from a model request.
 */
export async function declassifyImpl(
  env: EngineEnv,
  scope: ServiceScope,
  actorPid: string,
  target: string,
  newLabels: unknown,
  opts: { readonly current?: DataLabels } = {},
): Promise<DeclassifyReceipt> {
  const db = dbOf(scope);
  const labels = completeLabels(parseLabels(newLabels, { field: 'newLabels' }));
  const { resource, pid } = declassResource(target);
  const canonical = parseResource(resource).canonical;
  const d = await authorizeIn(env, db, actorPid, canonical, 'admin', { operation: 'data_flow.declassify' });
  await auditDecision(scope, d);
  if (!d.allowed || !d.selectedId) {
    throw new LibosError(
      'declassification_denied',
      `${actorPid} may not change labels of ${target}: needs admin on ${canonical} (${d.reason})`,
      { details: { resource: canonical } },
    );
  }
  await spendDecision(env, scope, db, actorPid, d);
  let from: DataLabels | null = opts.current ?? null;
  if (pid !== undefined) {
    const hw = await loadHighWater(db, pid);
    from = hw.labels;
    await storeHighWater(db, pid, labels, env.clock.now().toISOString(), hw.exists);
  }
  await audit(scope, 'data_flow.declassify', target, 'declassified', {
    actor: actorPid,
    resource: canonical,
    capId: d.selectedId,
    from,
    to: labels,
  });
  return Object.freeze({ target, resource: canonical, labels, capId: d.selectedId });
}
