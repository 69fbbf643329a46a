import { wire } from '@libos/kernel';
import type { Command } from 'commander';
import { EXIT, print, table, UsageError } from '../output.js';
import type { CommandKit } from './kit.js';
import { parsePositiveInt } from './parse.js';
import { withRuntime } from './with-runtime.js';

/**
 * `libos objects`: Object metadata as the host sees it (never payloads), and `libos objects read <name>`: one
 * read_memory_object call through the broker as a process, with that process's rights. Payloads are runtime-local:
 * in a freshly opened store every earlier payload reads as payload_unavailable_after_reopen.
 */
export function registerObjects(program: Command, kit: CommandKit): void {
  const objects = program
    .command('objects')
    .description('list Objects (metadata only; --ns one namespace, --pid one owner process)')
    .option('--ns <namespace>', 'only this namespace')
    .option('--pid <pid>', 'only Objects owned by this process')
    .option('--limit <n>', 'at most n rows', '100')
    .action(
      kit.act(async (cmd: Command, f: { ns?: string; pid?: string; limit: string }) => {
        const o = kit.g(cmd);
        const limit = parsePositiveInt(f.limit, '--limit');
        await withRuntime(o, async (rt) => {
          if (f.pid) await rt.process(f.pid);
          const rows = await rt.listObjects({ limit, ...(f.ns ? { namespace: f.ns } : {}), ...(f.pid ? { ownerPid: f.pid } : {}) });
          print(o, rows.map(wire.objectMetaToWire), () =>
            table(
              rows.map((r) => ({
                oid: r.oid,
                namespace: r.namespace,
                name: r.name,
                type: r.type,
                v: r.version,
                payload: r.payloadAvailable ? 'available' : 'unavailable',
                sensitivity: r.labels.sensitivity,
              })),
              ['oid', 'namespace', 'name', 'type', 'v', 'payload', 'sensitivity'],
            ),
          );
        });
      }),
    );

  objects
    .command('read <name>')
    .description('read one Object by name as a process (its rights apply): read_memory_object through the broker')
    .option('--pid <pid>', 'the process that reads (required)')
    .option('--ns <namespace>', "namespace (default the process's own scope)")
    .option('--pointer <json-pointer>', 'RFC 6901 pointer into the payload', '')
    .option('--max-chars <n>', 'page size in characters (1..200000)')
    .option('--cursor <n>', 'byte cursor of a continuation page (needs --sha256)')
    .option('--sha256 <digest>', 'first page digest, for continuation pages')
    .action(
      kit.act(async (cmd: Command, name: string) => {
        const o = kit.g(cmd);
        // --pid and --ns also exist on `objects`; commander may hand them to the parent, so read them merged.
        const f = cmd.optsWithGlobals() as {
          pid?: string;
          ns?: string;
          pointer: string;
          maxChars?: string;
          cursor?: string;
          sha256?: string;
        };
        if (!f.pid) throw new UsageError("objects read: --pid is required (a read uses that process's rights)");
        const args: Record<string, unknown> = { name, json_pointer: f.pointer };
        if (f.ns) args.namespace = f.ns;
        if (f.maxChars) args.max_payload_chars = parsePositiveInt(f.maxChars, '--max-chars');
        if (f.cursor !== undefined) {
          const c = Number(f.cursor);
          if (!Number.isInteger(c) || c < 0)
            throw new UsageError(`--cursor must be a non-negative integer (got ${JSON.stringify(f.cursor)})`);
          args.cursor = c;
        }
        if (f.sha256) args.expected_sha256 = f.sha256;
        const pid = f.pid;
        return withRuntime(o, async (rt) => {
          await rt.process(pid);
          const r = await rt.call(pid, 'read_memory_object', args);
          if (!r.ok) {
            process.stderr.write(`libos: ${r.error.code}: ${r.error.message}\n`);
            return EXIT.toolError;
          }
          const p = r.payload as {
            representation: string;
            payload: unknown;
            preview?: string;
            next_cursor?: number;
            sha256: string;
            version: number;
            type: string;
          };
          print(o, p, () =>
            [
              `${name} (${p.type}, version ${p.version}, sha256 ${p.sha256})`,
              p.representation === 'json_value'
                ? JSON.stringify(p.payload, null, 2)
                : `${p.preview}${p.next_cursor !== undefined ? `\n… continue with --cursor ${p.next_cursor} --sha256 ${p.sha256}` : ''}`,
            ].join('\n'),
          );
          return EXIT.ok;
        });
      }),
    );
}
