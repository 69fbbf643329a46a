import { ControlledTransaction, SingleConnectionProvider, type Dialect, type Kysely, type KyselyConfig } from 'kysely';
import type { DirectStore } from '../direct-queries.js';
import type { KernelDatabase } from '../kernel-database.js';
import { runCompiled, type StatementSource, type StoreDriver } from './store-driver.js';

/** A unit's transaction state, as kysely's `ControlledTransaction` keeps it (its type is not exported). */
interface UnitState {
  status: 'active' | 'committed' | 'rolled back' | 'aborted';
}

/** What `directUnits` needs of an open SQLite store: its root handle, as made from `config`, and its parts. */
export interface DirectUnitsOf {
  readonly db: Kysely<KernelDatabase>;
  readonly config: KyselyConfig;
  readonly dialect: Dialect;
  readonly driver: StoreDriver;
  readonly statements: StatementSource;
}

/**
 * The `DirectStore` of a SQLite store without kysely plugins (`open-sqlite.ts` binds it to the root handle): compiled
 * queries run on their prepared statements (K-9.22); a unit begins at once on the free connection (K-9.25) as the
 * `ControlledTransaction` kysely's `startTransaction` would make, less its connection provider's round of promises;
 * and commits at once on it (K-9.26), as kysely's commit would, less its command and connection provider. The unit's
 * transaction state is the object kysely reads, so the unit reads as committed after, and kysely refuses what it
 * refuses after its own commit.
 *
 * @example
 * declare const parts: DirectUnitsOf;
 * const units = directUnits(parts);
 * const trx = units.beginUnit(); // null while the connection is held or waited for
 * if (trx) await units.commitUnit(trx);
 */
export function directUnits({ db, config, dialect, driver, statements }: DirectUnitsOf): DirectStore {
  const states = new WeakMap<object, UnitState>();
  const run: DirectStore['run'] = (compiled) => runCompiled(statements.prepare(compiled.sql), compiled.parameters);
  return {
    run,
    beginUnit: () => {
      const connection = driver.tryBeginUnit();
      if (!connection) return null;
      const transactionState: UnitState = { status: 'active' };
      const trx = new ControlledTransaction<KernelDatabase>({
        config,
        dialect,
        driver,
        executor: db.getExecutor().withConnectionProvider(new SingleConnectionProvider(connection)),
        connection: { connection, release: () => driver.release() },
        transactionState,
      });
      states.set(trx, transactionState);
      return trx;
    },
    runFree: (compiled) => {
      if (!driver.tryHold()) return null;
      try {
        return run(compiled);
      } finally {
        driver.release();
      }
    },
    // Released once committed; a failed COMMIT keeps the connection for the rollback (through kysely), which
    // releases it. A unit no longer active commits through kysely, which says why it cannot.
    commitUnit: (trx) => {
      const state = states.get(trx);
      if (state?.status !== 'active') return null;
      return driver.commitTransaction().then(() => {
        state.status = 'committed';
        driver.release();
      });
    },
  };
}
