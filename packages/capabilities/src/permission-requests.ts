import { LibosError, type Right } from '@libos/sdk';
import { parseResource } from './resource.js';
import { parseRights } from './rights.js';

/** Rights a model may never ask a human for on the broad resources below. */
export const PRIVILEGED_RIGHTS: readonly Right[] = Object.freeze(['admin', 'grant', 'revoke', 'write', 'execute', 'delete']);

/** A human's standing decision on a permission request. */
export type PermissionDecision = 'always_allow' | 'always_deny' | 'ask_each_time';

/**
 * Model limits on standing permission requests (CAP-39), checked before any prompt: no privileged right on
 * `capability:…` or on a whole kind (`kind:*`); shell execute only on the exact `shell:git`; no filesystem
 * write/delete outside the workspace; no workspace-wide delete. Throws `permission_denied` naming the rule.
 *
 * @example
 * assertRequestable('filesystem:workspace:notes.md', ['write']); // ok
 * assertRequestable('capability:*', ['admin']);                   // throws
 */
export function assertRequestable(
  resource: string,
  rights: readonly string[],
): { readonly resource: string; readonly rights: readonly Right[] } {
  const r = parseResource(resource);
  const rs = parseRights(rights);
  const privileged = rs.filter((x) => PRIVILEGED_RIGHTS.includes(x));
  const refuse = (why: string) =>
    new LibosError('permission_denied', `request_permission: ${why}; a human is not asked`, {
      details: { resource: r.canonical, rights: rs, rule: why },
    });
  if (privileged.length > 0 && r.kind === 'capability') throw refuse(`${privileged.join(', ')} on ${r.canonical} is never requestable`);
  if (privileged.length > 0 && r.form === 'prefix' && r.root === '')
    throw refuse(`${privileged.join(', ')} on a whole kind (${r.canonical}) is never requestable`);
  if (r.kind === 'shell' && rs.includes('execute') && !(r.form === 'exact' && r.root === 'git'))
    throw refuse(`execute on ${r.canonical}: only the exact shell:git is requestable`);
  if (r.kind === 'filesystem') {
    const inWorkspace = r.root === 'workspace' || r.root.startsWith('workspace:') || r.root.startsWith('workspace/');
    const wd = rs.filter((x) => x === 'write' || x === 'delete');
    if (wd.length > 0 && !inWorkspace) throw refuse(`${wd.join(', ')} on ${r.canonical} outside the workspace is never requestable`);
    const workspaceWide = r.root === 'workspace' || (r.form !== 'exact' && r.root === 'workspace');
    if (rs.includes('delete') && workspaceWide) throw refuse(`delete on the whole workspace (${r.canonical}) is never requestable`);
  }
  return { resource: r.canonical, rights: rs };
}

/** Validates a human's answer: approved ⇒ always_allow | ask_each_time; rejected ⇒ always_deny | ask_each_time. */
export function permissionEffect(approved: unknown, decision: unknown): 'allow' | 'deny' | 'ask' {
  if (typeof approved !== 'boolean')
    throw new LibosError('invalid_arguments', 'approved: must be a boolean', { details: { field: 'approved' } });
  const d = decision ?? (approved ? 'always_allow' : 'always_deny');
  if (d !== 'always_allow' && d !== 'always_deny' && d !== 'ask_each_time') {
    throw new LibosError(
      'invalid_arguments',
      `decision: must be always_allow, always_deny or ask_each_time (got ${JSON.stringify(decision)})`,
      { details: { field: 'decision' } },
    );
  }
  if (approved && d === 'always_deny')
    throw new LibosError('invalid_arguments', 'decision: always_deny contradicts approved=true', { details: { field: 'decision' } });
  if (!approved && d === 'always_allow')
    throw new LibosError('invalid_arguments', 'decision: always_allow contradicts approved=false', { details: { field: 'decision' } });
  return d === 'always_allow' ? 'allow' : d === 'always_deny' ? 'deny' : 'ask';
}
