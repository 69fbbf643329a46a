import { LibosError, canonicalJson, type Effect } from '@libos/sdk';

/** Stored constraints are JSON of at most this many bytes (canonical form). */
export const CONSTRAINTS_MAX_BYTES = 16 * 1024;

/** The request-side facts constraints are evaluated against. */
export interface ConstraintContext {
  /** The pid asking. */
  readonly subject: string;
  /** Operation name, e.g. `tool:append_memory_object` or `shell.exec`. */
  readonly operation?: string;
  /** sha256 of the canonical arguments. */
  readonly argsHash?: string;
  /** Pre-allocated effect id of a per-use approval. */
  readonly effectId?: string;
  /** Version of the target state the arguments were checked against. */
  readonly targetStateVersion?: string | number;
  /** Argument vector (shell-like primitives) for rule conditions. */
  readonly argv?: readonly string[];
  /** Scalar fields for rule `equals` conditions. */
  readonly fields?: Readonly<Record<string, string | number | boolean | null>>;
  /** Facts a data-release approval is bound to. */
  readonly release?: Readonly<Record<string, string | number>>;
}

/** What one constraint says about one request. */
export type ConstraintOutcome =
  | { readonly status: 'pass' }
  | { readonly status: 'fail'; readonly reason: string }
  /** Rules exist but none is scoped to this operation. */
  | { readonly status: 'scoped_miss'; readonly reason: string }
  /** A rule is malformed: fail closed with a deny. */
  | { readonly status: 'malformed'; readonly reason: string }
  /** A rule matched and selects this effect. */
  | { readonly status: 'rule'; readonly effect: Effect; readonly ruleId: string };

/**
 * One key of the closed, extensible constraint registry.
 *
 * @example
 * const ticket: ConstraintEvaluator = {
 *   key: 'ticket',
 *   validate: (v) => (typeof v === 'string' ? null : 'must be a string'),
 *   evaluate: (v, ctx) => (ctx.fields?.ticket === v ? { status: 'pass' } : { status: 'fail', reason: 'ticket mismatch' }),
 * };
 */
export interface ConstraintEvaluator {
  readonly key: string;
  /** null when the value is well-formed, else why not. */
  validate(value: unknown): string | null;
  evaluate(value: unknown, ctx: ConstraintContext): ConstraintOutcome;
  /** A delegation may keep but never add this key (e.g. `shell_policy_level`). */
  readonly notAddableByDelegation?: boolean;
}

/** One line of a decision's `constraintResults`. */
export interface ConstraintResult {
  readonly capId: string;
  readonly key: string;
  readonly status: ConstraintOutcome['status'] | 'unknown_key';
  readonly reason?: string;
  /** Set when a rule matched: the effect it selects. */
  readonly ruleEffect?: Effect;
  readonly ruleId?: string;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const HASH = /^[0-9a-f]{64}$/;

/** `approval_binding {canonicalArgsHash, effectId?, targetStateVersion?}`: a one-shot approval for exact arguments. */
export const approvalBindingConstraint: ConstraintEvaluator = {
  key: 'approval_binding',
  validate(v) {
    if (!isObj(v)) return 'must be an object';
    for (const k of Object.keys(v))
      if (!['canonicalArgsHash', 'effectId', 'targetStateVersion'].includes(k)) return `unknown field ${JSON.stringify(k)}`;
    if (typeof v.canonicalArgsHash !== 'string' || !HASH.test(v.canonicalArgsHash))
      return 'canonicalArgsHash must be a lowercase sha256 hex';
    if (v.effectId !== undefined && (typeof v.effectId !== 'string' || v.effectId === '')) return 'effectId must be a non-empty string';
    if (v.targetStateVersion !== undefined && typeof v.targetStateVersion !== 'string' && typeof v.targetStateVersion !== 'number')
      return 'targetStateVersion must be a string or number';
    return null;
  },
  evaluate(v, ctx) {
    const b = v as { canonicalArgsHash: string; effectId?: string; targetStateVersion?: string | number };
    if (ctx.argsHash !== b.canonicalArgsHash) return { status: 'fail', reason: 'arguments differ from the approved ones' };
    if (b.effectId !== undefined && ctx.effectId !== b.effectId)
      return { status: 'fail', reason: 'effect id differs from the approved one' };
    if (b.targetStateVersion !== undefined && ctx.targetStateVersion !== b.targetStateVersion)
      return { status: 'fail', reason: 'target state changed since approval' };
    return { status: 'pass' };
  },
};

/** `shell_policy_level`: a level the shell primitive enforces; kept on delegation, never added by it. */
export const shellPolicyLevelConstraint: ConstraintEvaluator = {
  key: 'shell_policy_level',
  notAddableByDelegation: true,
  validate: (v) => (typeof v === 'string' && /^[a-z][a-z0-9_]{0,31}$/.test(v) ? null : 'must be a lower_snake level name'),
  evaluate: () => ({ status: 'pass' }),
};

/** `data_release_binding {…}`: a one-shot data release bound to exact facts (sink, labels hash, payload hash, …). */
export const dataReleaseBindingConstraint: ConstraintEvaluator = {
  key: 'data_release_binding',
  validate(v) {
    if (!isObj(v) || Object.keys(v).length === 0) return 'must be a non-empty object';
    for (const [k, x] of Object.entries(v))
      if (typeof x !== 'string' && typeof x !== 'number') return `field ${JSON.stringify(k)} must be a string or number`;
    return null;
  },
  evaluate(v, ctx) {
    const want = v as Record<string, string | number>;
    if (!ctx.release) return { status: 'fail', reason: 'no release context' };
    for (const [k, x] of Object.entries(want))
      if (ctx.release[k] !== x) return { status: 'fail', reason: `release ${k} differs from the approved one` };
    return { status: 'pass' };
  },
};

const RULE_KEYS = ['ruleId', 'operation', 'effect', 'risk', 'conditions'];
const CONDITION_KEYS = ['argvExact', 'argvPrefix', 'equals'];

function ruleProblem(rule: unknown, i: number): string | null {
  if (!isObj(rule)) return `rule ${i}: must be an object`;
  for (const k of Object.keys(rule)) if (!RULE_KEYS.includes(k)) return `rule ${i}: unknown field ${JSON.stringify(k)}`;
  if (typeof rule.ruleId !== 'string' || rule.ruleId === '') return `rule ${i}: ruleId must be a non-empty string`;
  if (typeof rule.operation !== 'string' || rule.operation === '') return `rule ${i}: operation must be a non-empty string`;
  if (rule.effect !== 'allow' && rule.effect !== 'deny' && rule.effect !== 'ask') return `rule ${i}: effect must be allow, deny or ask`;
  if (rule.risk !== undefined && typeof rule.risk !== 'string') return `rule ${i}: risk must be a string`;
  const c = rule.conditions ?? {};
  if (!isObj(c)) return `rule ${i}: conditions must be an object`;
  for (const k of Object.keys(c)) if (!CONDITION_KEYS.includes(k)) return `rule ${i}: unknown condition ${JSON.stringify(k)}`;
  for (const k of ['argvExact', 'argvPrefix'] as const) {
    const a = c[k];
    if (a !== undefined && (!Array.isArray(a) || a.length === 0 || !a.every((s) => typeof s === 'string')))
      return `rule ${i}: ${k} must be a non-empty string array`;
  }
  if (c.equals !== undefined) {
    if (!isObj(c.equals)) return `rule ${i}: equals must be an object`;
    for (const x of Object.values(c.equals))
      if (x !== null && !['string', 'number', 'boolean'].includes(typeof x)) return `rule ${i}: equals values must be scalars`;
  }
  return null;
}

interface Rule {
  ruleId: string;
  operation: string;
  effect: Effect;
  conditions?: { argvExact?: string[]; argvPrefix?: string[]; equals?: Record<string, unknown> };
}

function ruleMatches(rule: Rule, ctx: ConstraintContext): boolean {
  if (ctx.operation !== rule.operation) return false;
  const c = rule.conditions ?? {};
  const argv = ctx.argv;
  if (c.argvExact && !(argv && argv.length === c.argvExact.length && c.argvExact.every((s, i) => argv[i] === s))) return false;
  if (c.argvPrefix && !(argv && argv.length >= c.argvPrefix.length && c.argvPrefix.every((s, i) => argv[i] === s))) return false;
  if (c.equals) for (const [k, v] of Object.entries(c.equals)) if (!ctx.fields || ctx.fields[k] !== v) return false;
  return true;
}

/**
 * `authority_rules [{ruleId, operation, effect, risk?, conditions?}]`: rules scoped to an operation.
 * A matching rule selects its effect (deny > ask > first allow); no match is a scoped miss;
 * a request without an operation fails; a malformed rule fails closed as a deny.
 */
export const authorityRulesConstraint: ConstraintEvaluator = {
  key: 'authority_rules',
  validate(v) {
    if (!Array.isArray(v) || v.length === 0 || v.length > 64) return 'must be an array of 1..64 rules';
    for (let i = 0; i < v.length; i++) {
      const p = ruleProblem(v[i], i);
      if (p) return p;
    }
    return null;
  },
  evaluate(v, ctx) {
    const problem = this.validate(v);
    if (problem) return { status: 'malformed', reason: problem };
    if (ctx.operation === undefined) return { status: 'fail', reason: 'rules need an operation name and the request has none' };
    const matched = (v as Rule[]).filter((r) => ruleMatches(r, ctx));
    if (matched.length === 0) return { status: 'scoped_miss', reason: `no rule matched operation ${ctx.operation}` };
    const pick = matched.find((r) => r.effect === 'deny') ?? matched.find((r) => r.effect === 'ask') ?? matched[0]!;
    return { status: 'rule', effect: pick.effect, ruleId: pick.ruleId };
  },
};

/** The built-in registry: `approval_binding`, `authority_rules`, `data_release_binding`, `shell_policy_level`. */
export const BUILTIN_CONSTRAINTS: readonly ConstraintEvaluator[] = Object.freeze([
  approvalBindingConstraint,
  authorityRulesConstraint,
  dataReleaseBindingConstraint,
  shellPolicyLevelConstraint,
]);

/** A closed key registry; build one with extra evaluators to extend it. */
export class ConstraintRegistry {
  readonly #byKey: ReadonlyMap<string, ConstraintEvaluator>;

  constructor(evaluators: readonly ConstraintEvaluator[] = BUILTIN_CONSTRAINTS) {
    const m = new Map<string, ConstraintEvaluator>();
    for (const e of evaluators) {
      if (m.has(e.key))
        throw new LibosError('invalid_arguments', `constraints: key ${JSON.stringify(e.key)} registered twice`, {
          details: { field: 'constraints' },
        });
      m.set(e.key, e);
    }
    this.#byKey = m;
  }

  get(key: string): ConstraintEvaluator | undefined {
    return this.#byKey.get(key);
  }

  /**
   * Validates constraints at issue: plain JSON object, at most 16 KiB, every key known and well-formed.
   * Throws `capability_invalid` naming the key. Returns a frozen copy.
   */
  validate(value: unknown, field = 'constraints'): Readonly<Record<string, unknown>> {
    if (value === undefined || value === null) return Object.freeze({});
    if (!isObj(value)) throw new LibosError('capability_invalid', `${field}: must be a JSON object`, { details: { field } });
    let text: string;
    try {
      text = canonicalJson(value);
    } catch (cause) {
      throw new LibosError('capability_invalid', `${field}: must be plain JSON`, { details: { field }, cause });
    }
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > CONSTRAINTS_MAX_BYTES)
      throw new LibosError('capability_invalid', `${field}: at most ${CONSTRAINTS_MAX_BYTES} bytes of JSON (got ${bytes})`, {
        details: { field, bytes },
      });
    for (const [k, v] of Object.entries(value)) {
      const e = this.#byKey.get(k);
      if (!e)
        throw new LibosError('capability_invalid', `${field}.${k}: unknown constraint key (known: ${[...this.#byKey.keys()].join(', ')})`, {
          details: { field: `${field}.${k}` },
        });
      const p = e.validate(v);
      if (p) throw new LibosError('capability_invalid', `${field}.${k}: ${p}`, { details: { field: `${field}.${k}` } });
    }
    return Object.freeze(JSON.parse(text) as Record<string, unknown>);
  }

  /** Evaluates every constraint of one record. Unknown keys and oversized JSON fail that record. */
  evaluate(capId: string, constraints: Readonly<Record<string, unknown>>, ctx: ConstraintContext): ConstraintResult[] {
    const out: ConstraintResult[] = [];
    // Most records have none: `{}` is within every bound, so there is nothing to measure or evaluate.
    if (Object.getPrototypeOf(constraints) === Object.prototype && Object.keys(constraints).length === 0) return out;
    let size = Infinity;
    try {
      size = Buffer.byteLength(canonicalJson(constraints), 'utf8');
    } catch {
      // not JSON: size stays infinite and the record fails below
    }
    if (size > CONSTRAINTS_MAX_BYTES)
      return [{ capId, key: '*', status: 'fail', reason: `constraints exceed ${CONSTRAINTS_MAX_BYTES} bytes or are not JSON` }];
    for (const [key, value] of Object.entries(constraints)) {
      const e = this.#byKey.get(key);
      if (!e) {
        out.push({ capId, key, status: 'unknown_key', reason: `unknown constraint key ${key}` });
        continue;
      }
      const problem = e.validate(value);
      if (problem && key !== 'authority_rules') {
        out.push({ capId, key, status: 'fail', reason: `malformed: ${problem}` });
        continue;
      }
      const o = e.evaluate(value, ctx);
      out.push(
        o.status === 'pass'
          ? { capId, key, status: 'pass' }
          : o.status === 'rule'
            ? { capId, key, status: 'rule', ruleEffect: o.effect, ruleId: o.ruleId }
            : { capId, key, status: o.status, reason: o.reason },
      );
    }
    return out;
  }
}
