import { Kysely } from 'kysely';
import { LibosError, type ServiceScope } from '@libos/sdk';
import type { KernelStore } from './kernel-database.js';

/** A scope whose store is typed with the kernel's tables: what kernel tools, services and hooks work in. */
export interface KernelScope extends ServiceScope {
  readonly store: KernelStore;
}

/*
 * The one place the kernel narrows `ServiceScope.store` (typed `unknown` in the sdk, which depends on zod only). Every
 * scope the kernel hands out (a tool's context, a service's or hook's scope) is made by `inTransaction` over a
 * transaction of the kernel's store, and the kernel's migrations ran before any scope exists; so a store that is a
 * kysely handle has the kernel's tables. The check is that it is one.
 */
const isKernelStore = (handle: unknown): handle is KernelStore => handle instanceof Kysely;
const hasKernelStore = <S extends ServiceScope>(scope: S): scope is S & KernelScope => isKernelStore(scope.store);

/**
 * The store handle a migration of the kernel's own sets is given (`Migration.up(db: unknown, kit)`), typed. A migration
 * only touches tables that it or an earlier one of its set created.
 *
 * @example
 * const migration = { name: '0001_x', async up(raw: unknown) { await migrationStore(raw).schema.dropIndex('x').execute(); } };
 */
export function migrationStore(raw: unknown): KernelStore {
  if (isKernelStore(raw)) return raw;
  throw new LibosError('internal_error', 'migration: the store handle is not a kysely handle');
}

/**
 * `scope` with its store typed (the same object): for a tool's `ctx` or a service's scope.
 *
 * @example
 * declare const ctx: ServiceScope;
 * const rows = await kernelScope(ctx).store.selectFrom('processes').select('pid').execute();
 */
export function kernelScope<S extends ServiceScope>(scope: S): S & KernelScope {
  if (hasKernelStore(scope)) return scope;
  const why = 'scope.store: not a kysely handle of the kernel store; kernel code runs only in scopes the kernel made';
  throw new LibosError('internal_error', why);
}

/**
 * The kernel's typed store of `scope`.
 *
 * @example
 * declare const scope: ServiceScope;
 * const row = await storeOf(scope).selectFrom('events').select('seq').orderBy('seq', 'desc').executeTakeFirst();
 */
export const storeOf = (scope: ServiceScope): KernelStore => kernelScope(scope).store;
