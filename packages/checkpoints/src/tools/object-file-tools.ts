import { LibosError, SERVICE_NAMES, z, type DataLabels, type FilesService, type ObjectsService, type ToolContext } from '@libos/sdk';
import { defineTool } from '@libos/sdk';
import { jsonStringSize, MAX_OBJECT_PAYLOAD_SIZE } from '../internal/json-size.js';
import { checkpointsDb } from '../internal/store.js';
import { namespaces, resources } from '@libos/sdk';

const objects = (ctx: ToolContext) => ctx.service<ObjectsService>(SERVICE_NAMES.objects);
const files = (ctx: ToolContext) => ctx.service<FilesService>(SERVICE_NAMES.files);

const processScope = (pid: string) => namespaces.process(pid);
const namespaceOf = (ctx: ToolContext, ns: string | null | undefined) => (ns == null || ns.trim() === '' ? processScope(ctx.pid) : ns);

const nameField = z.string().min(1).max(1024).describe('the Object name (exact, after trimming)');
const namespaceField = z.string().max(1024).nullable().optional().describe('its namespace; default your process scope process:<pid>');
const pathField = z.string().min(1).max(4096).describe('a file path, relative to your working directory or absolute');

/** The file text of a payload: a string, or `{content: string}`. */
function fileText(payload: unknown, ref: string): string {
  if (typeof payload === 'string') return payload;
  if (
    payload !== null &&
    typeof payload === 'object' &&
    !Array.isArray(payload) &&
    typeof (payload as { content?: unknown }).content === 'string'
  ) {
    return (payload as { content: string }).content;
  }
  throw new LibosError('invalid_arguments', `name: the payload of ${ref} is not a string or {content: string}; only text goes to a file`, {
    details: { field: 'name' },
  });
}

/**
 * `write_object_to_file`: the durable path for an Object's text. Reads the Object with your rights (namespace `read`,
 * then Object `read`: an unreadable Object looks missing), then writes its payload (a string, or the `content` of
 * `{content: string}`) with the workspace file provider (`write` on `fs:<real path>`, symbolic links resolved before the
 * check). The Object's labels become the file's binding: reading the file back into an Object gives them back.
 */
export const writeObjectToFile = defineTool({
  name: 'write_object_to_file',
  description:
    "Write an Object's text (a string payload, or {content: string}) to a file, the durable path across a runtime reopen. Needs read on " +
    'the namespace and the Object and write on fs:<absolute path> (symbolic links are resolved before the check). The file keeps the ' +
    "Object's labels.",
  input: z.object({
    name: nameField,
    namespace: namespaceField,
    path: pathField,
    mode: z
      .enum(['create_or_overwrite', 'create', 'overwrite'])
      .default('create_or_overwrite')
      .describe('create (fails if it exists), overwrite (fails if missing), or either'),
  }),
  policy: { sideEffects: true },
  async run(args, ctx) {
    const namespace = namespaceOf(ctx, args.namespace);
    const om = objects(ctx);
    await ctx.authority.require(resources.namespace(namespace.trim()), 'read', {
      code: 'namespace_denied',
      message: `namespace: ${ctx.pid} may not read ${namespace}`,
    });
    const ref = await om.lookup(namespace, args.name);
    const readable = ref ? await ctx.authority.check(resources.object(ref.oid), 'read') : null;
    if (!ref || !readable?.allowed)
      throw new LibosError('object_not_found', `name: no readable Object ${JSON.stringify(args.name.trim())} in ${namespace}`, {
        details: { field: 'name', namespace },
      });
    await ctx.authority.consume(readable);
    const described = (await om.describe(ref.oid))!;
    const text = fileText(await om.readPayload(ref.oid), `${ref.namespace}/${ref.name}`);
    await ctx.flow.taint(described.labels, [ref.oid]);
    const w = await files(ctx).writeText(ctx.pid, args.path, text, { field: 'path', mode: args.mode });
    const at = ctx.clock.now().toISOString();
    const binding = { labels: JSON.stringify(described.labels), sha256: w.sha256, oid: ref.oid, pid: ctx.pid, updated_at: at };
    await checkpointsDb(ctx.store)
      .insertInto('file_label_bindings')
      .values({ path: w.path, ...binding })
      .onConflict((oc) => oc.column('path').doUpdateSet(binding))
      .execute();
    await ctx.audit.record({
      action: 'object.write_to_file',
      target: resources.object(ref.oid),
      decision: 'ok',
      details: { path: w.path, bytes: w.bytes, sha256: w.sha256, version: ref.version, labels: described.labels },
    });
    return {
      oid: ref.oid,
      namespace: ref.namespace,
      name: ref.name,
      version: ref.version,
      path: w.path,
      bytes: w.bytes,
      sha256: w.sha256,
      created: w.created,
    };
  },
});

/**
 * `read_file_to_object`: a file's text as a new Object (a string payload, or `{content}` with `wrap_content`). Needs
 * `read` on `fs:<real path>` and `write` on the namespace. The file's binding (the labels of the Object it was written
 * from) and your flow join the new Object's labels; file content is external, so it is never trusted.
 */
export const readFileToObject = defineTool({
  name: 'read_file_to_object',
  description:
    'Read a UTF-8 text file into a new Object (payload: the text, or {content: text} with wrap_content). ' +
    'Needs read on fs:<absolute path> ' +
    '(symbolic links resolved before the check) and write on the namespace. The Object keeps the labels the file was written with.',
  input: z.object({
    path: pathField,
    name: nameField,
    namespace: namespaceField,
    type: z.string().min(1).max(64).default('artifact').describe('an Object type (default artifact)'),
    immutable: z.boolean().default(true),
    wrap_content: z.boolean().default(false).describe('store {content: text} instead of the text itself'),
  }),
  async run(args, ctx) {
    const namespace = namespaceOf(ctx, args.namespace);
    await ctx.authority.require(resources.namespace(namespace.trim()), 'write', {
      code: 'namespace_denied',
      message: `namespace: ${ctx.pid} may not write ${namespace}`,
    });
    const f = await files(ctx).readText(ctx.pid, args.path, { field: 'path' });
    const size = args.wrap_content ? jsonStringSize(f.content) + 13 : jsonStringSize(f.content);
    if (size > MAX_OBJECT_PAYLOAD_SIZE) {
      throw new LibosError(
        'payload_too_large',
        `path: ${f.path} makes a payload of SIZE ${size}, more than ${MAX_OBJECT_PAYLOAD_SIZE}; nothing was created`,
        { details: { field: 'path', size, maximum: MAX_OBJECT_PAYLOAD_SIZE } },
      );
    }
    const bound = await checkpointsDb(ctx.store)
      .selectFrom('file_label_bindings')
      .select(['labels'])
      .where('path', '=', f.path)
      .executeTakeFirst();
    // What the file was written with (its binding), and in any case external: never trusted.
    await ctx.flow.taint({ ...(bound ? (JSON.parse(bound.labels) as Partial<DataLabels>) : {}), trust_level: 'untrusted' });
    const labels = await ctx.flow.labels();
    const created = await objects(ctx).createForProcess(ctx.pid, {
      type: args.type,
      name: args.name,
      namespace,
      payload: args.wrap_content ? { content: f.content } : f.content,
      immutable: args.immutable,
      labels,
      metadata: { title: `file ${f.path}`, summary: `read from ${f.path} (sha256 ${f.sha256})` },
    });
    await ctx.audit.record({
      action: 'object.read_from_file',
      target: resources.object(created.oid),
      decision: 'ok',
      details: { path: f.path, bytes: f.bytes, sha256: f.sha256, labels, binding: bound !== undefined },
    });
    return {
      oid: created.oid,
      namespace: created.namespace,
      name: created.name,
      type: created.type,
      path: f.path,
      bytes: f.bytes,
      sha256: f.sha256,
    };
  },
});
