import type { CompiledQuery, DatabaseConnection, QueryResult } from 'kysely';

/**
 * For driver tests with no server: a kysely connection that records the SQL of every query it is sent and answers
 * no rows.
 *
 * @example
 * declare const query: CompiledQuery;
 * const { sent, connection } = recordingConnection();
 * await connection.executeQuery(query);
 * sent; // [query.sql]
 */
export function recordingConnection(): { sent: string[]; connection: DatabaseConnection } {
  const sent: string[] = [];
  const connection: DatabaseConnection = {
    async executeQuery<R>(q: CompiledQuery): Promise<QueryResult<R>> {
      sent.push(q.sql);
      return { rows: [] };
    },
    streamQuery: () => {
      throw new Error('not used');
    },
  };
  return { sent, connection };
}
