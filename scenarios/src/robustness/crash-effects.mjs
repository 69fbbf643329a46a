// The crash suite's plugin, shared by the workload child (which runs the built packages, so this file is plain
// JavaScript) and the checker in the test process (which runs the sources): one effectful tool and the image the
// workload's agents boot into. Both sides load it, so the table and the image exist wherever the store is opened.
import { appendFileSync } from 'node:fs';
import { definePlugin, defineTool, skillFromText, z } from '@libos/sdk';

export const CRASH_AGENT_IMAGE = 'crash-agent:v0';
export const EFFECT_TOOL = 'crash_effect';
export const EFFECT_SKILL = 'crash-effects';
/** The resource an effect on `key` needs `write` on. */
export const effectResource = (key) => `crash_effect:${key}`;

const SKILL_MD = `---
name: ${EFFECT_SKILL}
description: Crash suite only. An effect on the outside world that must happen at most once.
allowed-tools: ${EFFECT_TOOL}
---
Call ${EFFECT_TOOL} with a key you never used before; it needs write on crash_effect:<key>.
`;

/** The tools every crash agent sees from its spawn. */
export const CRASH_AGENT_TOOLS = [
  'process_exit',
  'create_memory_object',
  'read_memory_object',
  'append_memory_object',
  'spawn_child_process',
  'wait_child_process',
  'receive_process_messages',
  'ask_human',
  'request_permission',
  'start_object_task',
  'get_object_task',
  'wait_object_task',
  EFFECT_TOOL,
];

/**
 * `crash_effect{key}`: checks write on `crash_effect:<key>` (an `ask` grant parks the call for a human), then acts
 * on the outside world (one line appended to the file `log`, which no rollback takes back), then records the key
 * in the `crash_effects` table inside the call's transaction. A committed call therefore has exactly one row and at
 * least one line; a call replayed after its effect happened would leave a second line. `afterEffect` runs between
 * the two (the workload announces the moment and holds it open a little, so a kill can land there).
 */
export function crashEffects({ log, afterEffect }) {
  return definePlugin({
    name: 'crash-effects',
    version: '0.0.0',
    skills: [skillFromText(SKILL_MD, EFFECT_SKILL)],
    migrations: [
      {
        name: '0001_crash_effects',
        async up(db) {
          await db.schema
            .createTable('crash_effects')
            .addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement())
            .addColumn('key', 'text', (c) => c.notNull())
            .addColumn('pid', 'text', (c) => c.notNull())
            .addColumn('call_id', 'text', (c) => c.notNull())
            .execute();
        },
      },
    ],
    images: [
      {
        id: CRASH_AGENT_IMAGE,
        description: 'Crash suite agent: memory, children, human waits, tasks, approvals and one outside effect.',
        systemPrompt: 'You are a crash suite agent.',
        promptMode: 'image_only',
        defaultSkills: [
          'agent-libos-skill-navigation',
          'agent-libos-runtime-session',
          'agent-libos-object-memory',
          'agent-libos-child-processes',
          'agent-libos-authority',
          'agent-libos-object-tasks',
          EFFECT_SKILL,
        ],
        defaultTools: CRASH_AGENT_TOOLS,
      },
    ],
    tools: [
      defineTool({
        name: EFFECT_TOOL,
        description: 'Act once on the outside world under write on crash_effect:<key>.',
        input: z.object({ key: z.string().min(1).max(128) }),
        output: z.object({ key: z.string() }),
        policy: { sideEffects: true },
        async run({ key }, ctx) {
          await ctx.authority.require(effectResource(key), 'write');
          appendFileSync(log, `${JSON.stringify({ key, pid: ctx.pid, call_id: ctx.callId })}\n`);
          await afterEffect?.({ key, resumed: ctx.resumed });
          await ctx.store.insertInto('crash_effects').values({ key, pid: ctx.pid, call_id: ctx.callId }).execute();
          return { key };
        },
      }),
    ],
  });
}
