// The multi-host suite's plugin, loaded by the host children (built packages, so plain JavaScript) and by the test
// (sources): one effectful tool and the image the suite's agents boot into. `host_effect` checks write on
// `host_effect:<caller pid>` (granted with one use), appends one line to the outside file `log` (no rollback takes it
// back), and records the effect in `host_effects` inside the call's transaction.
import { appendFileSync } from 'node:fs';
import { definePlugin, defineTool, skillFromText, z } from '@libos/sdk';

export const HOST_AGENT_IMAGE = 'host-agent:v0';
export const EFFECT_TOOL = 'host_effect';
/** The resource a process's one effect needs `write` on. */
export const effectResource = (pid) => `host_effect:${pid}`;

/** Model turns of every process: one effect, then exit (a host that takes a tree over starts the script again). */
export const HOST_SCRIPT = {
  processes: { '*': [[{ tool: EFFECT_TOOL, args: {} }], [{ tool: 'process_exit', args: {} }]] },
};

const EFFECT_SKILL = 'host-effects';
const SKILL_MD = `---
name: ${EFFECT_SKILL}
description: Multi-host suite only. An effect on the outside world that must happen at most once.
allowed-tools: ${EFFECT_TOOL}
---
Call ${EFFECT_TOOL} once, then exit.
`;

export function hostEffects({ log, host }) {
  return definePlugin({
    name: 'host-effects',
    version: '0.0.0',
    skills: [skillFromText(SKILL_MD, EFFECT_SKILL)],
    migrations: [
      {
        name: '0001_host_effects',
        async up(db, kit) {
          await db.schema
            .createTable('host_effects')
            .addColumn('seq', 'integer', kit.seq)
            .addColumn('pid', kit.types.id, (c) => c.notNull())
            .addColumn('host', 'text', (c) => c.notNull())
            .execute();
        },
      },
    ],
    images: [
      {
        id: HOST_AGENT_IMAGE,
        description: 'Multi-host suite agent: one outside effect, then exit.',
        systemPrompt: 'You are a multi-host suite agent.',
        promptMode: 'image_only',
        defaultSkills: ['agent-libos-runtime-session', EFFECT_SKILL],
        defaultTools: [EFFECT_TOOL, 'process_exit'],
      },
    ],
    tools: [
      defineTool({
        name: EFFECT_TOOL,
        description: 'Act once on the outside world under write on host_effect:<your pid>.',
        input: z.object({}),
        output: z.object({ pid: z.string() }),
        policy: { sideEffects: true },
        async run(_args, ctx) {
          await ctx.authority.require(effectResource(ctx.pid), 'write');
          appendFileSync(log, `${JSON.stringify({ pid: ctx.pid, host })}\n`);
          await ctx.store.insertInto('host_effects').values({ pid: ctx.pid, host }).execute();
          return { pid: ctx.pid };
        },
      }),
    ],
  });
}
