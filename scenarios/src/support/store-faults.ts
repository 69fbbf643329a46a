import type { OpenRuntimeOptions } from '@libos/kernel';

/** A kysely plugin as `openRuntime({ kyselyPlugins })` takes it. */
export type StorePlugin = NonNullable<OpenRuntimeOptions['kyselyPlugins']>[number];

/** The part of kysely's InsertQueryNode read here: the table the INSERT writes. */
interface InsertNode {
  readonly kind: 'InsertQueryNode';
  readonly into?: { readonly table: { readonly identifier: { readonly name: string } } };
}

/**
 * Fault injection from outside the code under test: a kysely plugin (`openRuntime({ kyselyPlugins })`) under which
 * each INSERT into `table` asks `fault()` first and, when it returns an error, throws it before the row is written,
 * as a failing store would. Everything else in the call runs as it does in production.
 *
 * @example
 * let down = true;
 * const plugin = failInserts('process_messages', () => (down ? new Error('mailbox down') : null));
 */
export function failInserts(table: string, fault: () => Error | null): StorePlugin {
  return {
    transformQuery({ node }) {
      if (node.kind === 'InsertQueryNode' && (node as unknown as InsertNode).into?.table.identifier.name === table) {
        const err = fault();
        if (err) throw err;
      }
      return node;
    },
    transformResult: async ({ result }) => result,
  };
}
