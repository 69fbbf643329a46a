import { LibosError, SENSITIVITY_ORDER, canonicalSha256, compareSensitivity, type DataLabels, type Sensitivity } from '@libos/sdk';
import { parseResource } from './resource.js';

/** How far a sink is trusted with labelled data. */
export type SinkTrust = 'untrusted' | 'conditional' | 'trusted';

/**
 * A host rule for data sinks: `pattern` is exact or ends in one `*`.
 * `tenants`/`principals`: which labelled tenants/principals may flow there (`'*'` = any).
 */
export interface SinkRule {
  readonly pattern: string;
  readonly trustLevel: SinkTrust;
  readonly maxSensitivity: Sensitivity;
  readonly tenants: readonly string[] | '*';
  readonly principals: readonly string[] | '*';
  readonly identitySha256?: string;
}

/**
 * The default registry. Unmatched sinks are untrusted with max `normal`.
 * - `process:*` (internal messages; labels travel with the data): trusted up to secret.
 * - `llm:*` (the process's own model): trusted up to confidential.
 * - `human:owner:*`: trusted up to secret.
 * - `filesystem:workspace:*`: conditional up to restricted (above normal needs a bound one-shot release).
 */
export const DEFAULT_SINK_RULES: readonly SinkRule[] = Object.freeze([
  { pattern: 'process:*', trustLevel: 'trusted', maxSensitivity: 'secret', tenants: '*', principals: '*' },
  { pattern: 'llm:*', trustLevel: 'trusted', maxSensitivity: 'confidential', tenants: '*', principals: '*' },
  { pattern: 'human:owner:*', trustLevel: 'trusted', maxSensitivity: 'secret', tenants: '*', principals: '*' },
  { pattern: 'filesystem:workspace:*', trustLevel: 'conditional', maxSensitivity: 'restricted', tenants: [], principals: [] },
] satisfies SinkRule[]);

/** The rule unmatched sinks get. */
export const UNMATCHED_SINK_RULE: SinkRule = Object.freeze({
  pattern: '',
  trustLevel: 'untrusted',
  maxSensitivity: 'normal',
  tenants: [],
  principals: [],
});

const literal = (p: string) => (p.endsWith('*') ? p.slice(0, -1) : p);
const matches = (p: string, sink: string) => (p.endsWith('*') ? sink.startsWith(literal(p)) : sink === p);

/**
 * Validates a registry: patterns exact or with one trailing `*`; untrusted sinks at most `normal`;
 * no two wildcard rules with equal-length literals that overlap. Throws `invalid_arguments`.
 */
export function validateSinkRules(rules: readonly SinkRule[]): readonly SinkRule[] {
  const bad = (i: number, msg: string) => new LibosError('invalid_arguments', `rules[${i}]: ${msg}`, { details: { field: `rules[${i}]` } });
  rules.forEach((r, i) => {
    if (typeof r.pattern !== 'string' || r.pattern.length === 0 || r.pattern.length > 512)
      throw bad(i, 'pattern must be a non-empty string');
    if (r.pattern.indexOf('*') >= 0 && r.pattern.indexOf('*') !== r.pattern.length - 1)
      throw bad(i, `pattern ${r.pattern}: only one trailing "*" is allowed`);
    if (!['untrusted', 'conditional', 'trusted'].includes(r.trustLevel))
      throw bad(i, 'trustLevel must be untrusted, conditional or trusted');
    if (!(SENSITIVITY_ORDER as readonly string[]).includes(r.maxSensitivity))
      throw bad(i, `maxSensitivity must be one of ${SENSITIVITY_ORDER.join(', ')}`);
    if (r.trustLevel === 'untrusted' && compareSensitivity(r.maxSensitivity, 'normal') > 0)
      throw bad(i, `an untrusted sink may receive at most normal data (got ${r.maxSensitivity})`);
    for (const k of ['tenants', 'principals'] as const) {
      const v = r[k];
      if (v !== '*' && (!Array.isArray(v) || v.some((s) => typeof s !== 'string' || s === '' || s === 'mixed')))
        throw bad(i, `${k} must be "*" or an array of names`);
    }
    if (r.identitySha256 !== undefined && !/^[0-9a-f]{64}$/.test(r.identitySha256)) throw bad(i, 'identitySha256 must be a sha256 hex');
    rules.forEach((o, j) => {
      if (j <= i) return;
      if (o.pattern === r.pattern) throw bad(j, `duplicate pattern ${o.pattern}`);
      const a = literal(r.pattern);
      const b = literal(o.pattern);
      if (r.pattern.endsWith('*') && o.pattern.endsWith('*') && a.length === b.length && a === b)
        throw bad(j, `pattern ${o.pattern} overlaps ${r.pattern} with an equal-length literal`);
    });
  });
  return rules;
}

/** The rule a sink falls under: longest literal wins; unmatched ⇒ untrusted/normal. */
export function matchSinkRule(rules: readonly SinkRule[], sink: string): SinkRule {
  let best: SinkRule | null = null;
  for (const r of rules)
    if (
      matches(r.pattern, sink) &&
      (!best || literal(r.pattern).length > literal(best.pattern).length || (!r.pattern.endsWith('*') && best.pattern.endsWith('*')))
    )
      best = r;
  return best ?? UNMATCHED_SINK_RULE;
}

/** The outcome of a clearance check (payload-free). */
export interface EgressDecision {
  readonly sink: string;
  readonly decision: 'allow' | 'deny' | 'release_required';
  readonly reason: string;
  readonly rule: string | null;
  readonly trustLevel: SinkTrust;
  readonly labelsSha256: string;
}

/**
 * Sink clearance (docs/behaviour/capabilities.md): `mixed` identity ⇒ deny; sensitivity above the sink's max ⇒ deny; a rule identity
 * hash that differs from the sink's ⇒ deny; a labelled tenant/principal the rule does not list ⇒ deny;
 * a conditional sink above normal ⇒ `release_required`; else allow. Clearance never substitutes for a capability.
 *
 * @example
 * declare const labels: DataLabels; // the flow's labels
 * checkEgress(labels, 'human:alice:email').decision; // 'deny' for confidential data (unmatched sink)
 */
export function checkEgress(
  labels: DataLabels,
  sink: string,
  rules: readonly SinkRule[] = DEFAULT_SINK_RULES,
  opts: { readonly sinkIdentitySha256?: string } = {},
): EgressDecision {
  const parsed = parseResource(sink);
  if (parsed.form !== 'exact')
    throw new LibosError('invalid_arguments', `sink: ${sink} must be a concrete sink, not a pattern`, { details: { field: 'sink' } });
  const s = parsed.canonical;
  const rule = matchSinkRule(rules, s);
  const base = {
    sink: s,
    rule: rule.pattern === '' ? null : rule.pattern,
    trustLevel: rule.trustLevel,
    labelsSha256: canonicalSha256(labels),
  };
  const out = (decision: EgressDecision['decision'], reason: string): EgressDecision => Object.freeze({ ...base, decision, reason });
  if (labels.tenant === 'mixed' || labels.principal === 'mixed') return out('deny', 'data of mixed tenants or principals never leaves');
  if (compareSensitivity(labels.sensitivity, rule.maxSensitivity) > 0)
    return out('deny', `${labels.sensitivity} data exceeds the sink's clearance ${rule.maxSensitivity}`);
  if (rule.identitySha256 !== undefined && rule.identitySha256 !== opts.sinkIdentitySha256)
    return out('deny', 'the sink identity differs from the registered one');
  for (const k of ['tenant', 'principal'] as const) {
    const v = labels[k];
    const allowed = k === 'tenant' ? rule.tenants : rule.principals;
    if (v !== null && allowed !== '*' && !allowed.includes(v)) return out('deny', `${k} ${v} is not allowed at this sink`);
  }
  if (rule.trustLevel === 'conditional' && compareSensitivity(labels.sensitivity, 'normal') > 0)
    return out('release_required', `${labels.sensitivity} data to a conditional sink needs a bound one-shot release`);
  return out('allow', rule.pattern === '' ? 'unmatched sink: untrusted, normal data only' : `cleared by ${rule.pattern}`);
}
