import type { Kysely } from 'kysely';
import { definePlugin, defineTool, LibosError, skillFromText, z, type Plugin, type ToolContext } from '@libos/sdk';

/** A tiny plugin for kernel tests: it owns one table and writes to it under `note:<key>` write. */
export const NOTES_SKILL_MD = `---
name: test-notes
description: Write and count notes (kernel test fixture).
allowed-tools: note_write note_write_then_fail note_write_then_crash note_count
---
Use note_write to store a note; it needs write on note:<key>.
`;

/** The plugin's one table, as its migration creates it. */
export interface NotesDatabase {
  test_notes: { key: string; text: string; pid: string | null };
}

/**
 * A store handle typed for the notes table: the one place this plugin names its table's types. The sdk types a
 * scope's store as unknown (plugins own their tables' types); what the kernel hands out is a kysely handle.
 *
 * @example
 * declare const ctx: ToolContext;
 * const rows = await notesStore(ctx.store).selectFrom('test_notes').selectAll().execute();
 */
export const notesStore = (store: unknown): Kysely<NotesDatabase> => store as Kysely<NotesDatabase>;

const db = (ctx: ToolContext) => notesStore(ctx.store);

async function write(ctx: ToolContext, key: string, text: string) {
  await ctx.authority.require(`note:${key}`, 'write');
  await db(ctx).insertInto('test_notes').values({ key, text, pid: ctx.pid }).execute();
  await ctx.events.emit('note_written', { key });
}

export function notesPlugin(): Plugin {
  return definePlugin({
    name: 'test-notes',
    version: '0.0.0',
    skills: [skillFromText(NOTES_SKILL_MD, 'test-notes')],
    migrations: [
      {
        name: '0001_notes',
        async up(raw) {
          await notesStore(raw)
            .schema.createTable('test_notes')
            .addColumn('key', 'text', (c) => c.primaryKey())
            .addColumn('text', 'text', (c) => c.notNull())
            .addColumn('pid', 'text')
            .execute();
        },
      },
    ],
    tools: [
      defineTool({
        name: 'note_write',
        description: 'Store a note under a key.',
        input: z.object({ key: z.string().min(1).max(40), text: z.string().max(200) }),
        output: z.object({ key: z.string() }),
        async run({ key, text }, ctx) {
          await write(ctx, key, text);
          return { key };
        },
      }),
      defineTool({
        name: 'note_write_then_fail',
        description: 'Store a note, then fail with a LibosError.',
        input: z.object({ key: z.string() }),
        async run({ key }, ctx) {
          await write(ctx, key, 'doomed');
          throw new LibosError('conflict', `note ${key} failed after writing`);
        },
      }),
      defineTool({
        name: 'note_write_then_crash',
        description: 'Store a note, then throw a plain Error (a bug).',
        input: z.object({ key: z.string() }),
        async run({ key }, ctx) {
          await write(ctx, key, 'doomed');
          throw new TypeError('boom');
        },
      }),
      defineTool({
        name: 'note_count',
        description: 'Count notes.',
        input: z.object({}),
        async run(_args, ctx) {
          const r = await db(ctx)
            .selectFrom('test_notes')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow();
          return { count: Number(r.n) };
        },
      }),
    ],
  });
}

/** A test image whose callable table holds the notes tools and the navigation tools. */
export const NOTES_IMAGE_TOOLS = [
  'discover_skills',
  'activate_skill',
  'unload_skill',
  'note_write',
  'note_write_then_fail',
  'note_write_then_crash',
  'note_count',
];

export function notesPluginWithImage(): Plugin {
  const p = notesPlugin();
  return definePlugin({
    ...p,
    images: [
      {
        id: 'notes-agent:v0',
        description: 'Test image with the notes tools.',
        systemPrompt: 'Test.',
        promptMode: 'image_only',
        defaultSkills: ['agent-libos-skill-navigation'],
        defaultTools: NOTES_IMAGE_TOOLS,
      },
    ],
  });
}
