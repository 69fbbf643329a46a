import { estimateInput, ScriptedProvider, type LlmProfile, type LlmToolSchema, type QuantumResult, type Runtime } from '@libos/kernel';
import { SERVICE_NAMES, type LlmContextService, type ObjectsService, resources } from '@libos/sdk';

type StepFn = (text: string, details?: readonly string[]) => number;
type ExpectFn = (cond: boolean, n: number, what: string) => void;

const COMPRESSOR = 'context-compressor:v0';
/** The reply reserve of the scene's model profile. */
const RESERVE = 256;
/** Turns the scribe takes before its context passes the threshold, and after the compaction. */
const BEFORE = 4;
const AFTER = 1;

/** The scene's fixed inputs: what the scribe does, and the summary every compressor writes. */
export const COMPACTION_SCENE = {
  goal: 'Log the time at every turn for a long shift, then report',
  summary: {
    goal: 'log the time at every turn, then report',
    constraints: ['one clock read per turn'],
    user_preferences: [],
    completed: ['several clock reads logged'],
    pending: ['keep logging', 'report'],
    key_references: ['clock:now'],
    recent_decisions: [],
    risks: [],
    uncertainties: [],
    next_steps: ['read the clock', 'exit with the report'],
  },
} as const;

interface ContextFacts {
  readonly oid: string | null;
  readonly version: number | null;
  readonly generation: string | null;
  readonly mode: string | null;
  readonly entries: number;
}

async function contextFacts(rt: Runtime, pid: string): Promise<ContextFacts> {
  return rt.transaction(async (scope) => {
    const state = await scope.service<LlmContextService>(SERVICE_NAMES.llmContext).state(pid);
    const objects = scope.service<ObjectsService>(SERVICE_NAMES.objects);
    const d = state.oid ? await objects.describe(state.oid) : null;
    const payload = d?.payloadAvailable
      ? ((await objects.readPayload(d.oid)) as { cache_strategy: { mode: string }; entries: unknown[] })
      : null;
    return {
      oid: state.oid,
      version: d?.version ?? null,
      generation: state.generation,
      mode: payload?.cache_strategy.mode ?? null,
      entries: payload?.entries.length ?? 0,
    };
  });
}

/** A call's outcome in words: `ok` (or the given text) when it succeeded, else `refused <code>`. */
const outcome = (r: QuantumResult['results'][number] | undefined, ok: string): string => (r?.ok ? ok : `refused ${r?.error.code}`);

/** The input estimate of the last prompt `pid` sent (its llm_calls row), as context maintenance counts it. */
async function lastPromptTokens(rt: Runtime, pid: string, model: string): Promise<number> {
  const row = (await rt.llmCalls({ pid, limit: 10_000 })).at(-1)!;
  const request = row.request as { messages: { role: 'system' | 'user'; content: string }[]; tools: string[] };
  const schemas = new Map((await rt.toolSchemas(pid)).map((t) => [t.name, t]));
  const tools: LlmToolSchema[] = request.tools.map((name) => ({
    name,
    description: schemas.get(name)!.description,
    parameters: schemas.get(name)!.inputSchema,
  }));
  return (await estimateInput(model, request.messages, tools)).tokens;
}

/**
 * The compaction scene: a scribe process keeps an LLM context Object (granted `context:enrichment`) and logs the time
 * every turn, against a model profile whose window its prompt outgrows. When a prompt passes 80% of the window the
 * runtime compacts the context instead of asking the model (the scribe holds `context:maintenance`): two
 * `context-compressor:v0` children summarize it in turn, the compare-and-swap writes it back under a new version and
 * generation, and the scribe goes on working under the compacted context. Each step checks its outcome.
 */
export async function compactionScene(rt: Runtime, step: StepFn, expect: ExpectFn) {
  const scribe = await rt.spawn({ goal: COMPACTION_SCENE.goal });
  const grants = [
    ['context:enrichment', 'execute', 'keeps an LLM context Object'],
    ['context:maintenance', 'execute', 'the runtime may compact it automatically'],
    ['process:spawn', 'write', 'compaction spawns its compressors'],
    [resources.image(COMPRESSOR), 'read', 'boot the compressor image'],
    ['clock:now', 'read', 'its work: reading the clock'],
  ] as const;
  for (const [resource, right] of grants) await rt.grant(scribe.pid, resource, [right]);
  let n = step(
    `host spawns the scribe ${scribe.pid} and grants it: ${grants.map(([r, right]) => `${right} on ${r}`).join('; ')}`,
    grants.map(([r, , why]) => `${r}: ${why}`),
  );
  expect(scribe.status === 'runnable', n, `the scribe is ${scribe.status}, expected runnable`);

  const turns = [
    ...Array.from({ length: BEFORE + AFTER }, () => [{ tool: 'get_current_time', args: {} }]),
    [{ tool: 'process_exit', args: { payload: { report: 'the shift is logged' } } }],
  ];
  const provider = new ScriptedProvider({
    processes: { [scribe.pid]: turns },
    images: { [COMPRESSOR]: [[{ tool: 'process_exit', args: { payload: COMPACTION_SCENE.summary } }]] },
  });
  const roles = new Map<string, string>([[scribe.pid, 'scribe']]);
  const compressors: string[] = [];
  const role = (pid: string) => roles.get(pid) ?? pid;

  // First turns under a wide window: the demo measures them to size the scene's window (same story every run).
  const wide: LlmProfile = {
    name: 'demo-wide',
    provider: 'script',
    model: provider.model,
    context_window: 1_000_000,
    max_tokens: RESERVE,
    parallel_tool_calls: false,
  };
  const grown: number[] = [];
  const scribeTurns = () => provider.requests.filter((r) => r.pid === scribe.pid).length;
  for (let i = 0; i < BEFORE - 1; i++) {
    // One quantum at a time until the scribe has had this turn (any other runnable process takes its turn too).
    for (let guard = 0; scribeTurns() < i + 1 && guard < 10; guard++) await rt.run({ provider, profile: wide, maxQuanta: 1 });
    grown.push(await lastPromptTokens(rt, scribe.pid, provider.model));
    const c = await contextFacts(rt, scribe.pid);
    n = step(`scribe reads the clock → ok; its prompt ≈ ${grown.at(-1)} tokens`, [
      `context ${c.oid} version ${c.version}, ${c.entries} entries, generation ${c.generation}`,
    ]);
    expect(c.oid !== null && c.mode === 'append_only_stable_prefix', n, 'the scribe should keep an append-only LLM context Object');
  }
  // The window: the last prompt (plus the reply reserve) sits just under 80% of it, so the next one passes it.
  const window = Math.ceil((grown.at(-1)! + RESERVE) / 0.8) + 1;
  const profile: LlmProfile = { ...wide, name: 'demo-small', context_window: window };
  const before = await contextFacts(rt, scribe.pid);
  n = step(`the model profile now has a ${window}-token window (reply reserve ${RESERVE}); the next prompt will pass 80% of it`, [
    `context before: version ${before.version}, ${before.entries} entries, generation ${before.generation}`,
  ]);

  let compacted: Record<string, unknown> | null = null;
  let dispatchedAt = 0;
  const narrate = (q: QuantumResult) => {
    const r = q.results[0];
    if (q.pid === scribe.pid && q.kind === 'turn' && q.executed[0] === 'compact_process_context') {
      const child = r?.ok && r.wait?.kind === 'child' ? r.wait.child_pid : '?';
      roles.set(child, 'compressor 1');
      compressors.push(child);
      dispatchedAt = step(
        "the scribe's prompt passes 80% of the window: the runtime compacts its context instead of asking the model → " +
          'waits (waiting_child)',
        [`llm.context_maintenance: dispatched compact_process_context through the broker (max_chunks 2: two compressor children)`],
      );
    } else if (q.pid === scribe.pid && q.kind === 'resumed') {
      const payload = r?.ok ? (r.payload as Record<string, unknown> | null) : null;
      if (r?.ok && r.wait?.kind === 'child') {
        roles.set(r.wait.child_pid, `compressor ${compressors.length + 1}`);
        compressors.push(r.wait.child_pid);
        step(
          "scribe resumes compact_process_context without a model call: stage 1's summary rolls forward → " +
            `waits for ${role(r.wait.child_pid)} ${r.wait.child_pid}`,
        );
      } else if (payload?.compacted) {
        compacted = payload;
        step(
          `scribe resumes compact_process_context → compacted: version ${String(payload.old_version)} → ` +
            `${String(payload.new_version)}, ${String(payload.source_tokens)} → ${String(payload.compacted_tokens)} tokens`,
          [
            `compressors: ${(payload.compressor_pids as string[]).join(', ')}; ` +
              `${String(payload.preserved_recent_entries)} newest entries kept verbatim`,
          ],
        );
      } else step(`scribe resumes compact_process_context → ${r?.ok ? 'ok' : `refused ${r?.error.code}`}`);
    } else if (q.pid === scribe.pid) {
      step(`scribe ${q.executed.join(', ') || q.kind} → ${outcome(r, q.executed[0] === 'process_exit' ? 'exited' : 'ok')}`);
    } else {
      step(
        `${role(q.pid)} ${q.pid} (${COMPRESSOR}, table [process_exit]) summarizes its stage → ` +
          outcome(r, 'exits with the ten-key summary'),
      );
    }
  };
  const report = await rt.run({ provider, profile, maxQuanta: 40, onQuantum: narrate });
  n = step(`scheduler idle after ${report.quanta} quanta`);
  const result = compacted as Record<string, unknown> | null;
  expect(dispatchedAt > 0, n, "the scribe's context should have been compacted automatically");
  expect(
    result !== null && (result.compressor_pids as string[]).length === 2,
    n,
    'two compressor children should have written the summary',
  );
  const after = await contextFacts(rt, scribe.pid);
  const generations = await rt.audit({ action: 'llm.context_generation', pid: scribe.pid });
  const gen = generations.at(-1)?.details as { previous_generation?: string; generation?: string } | undefined;
  n = step(
    `context after: version ${String(result?.old_version)} → ${String(result?.new_version)}, ` +
      `generation ${gen?.previous_generation} → ${gen?.generation}`,
    ['the new generation forces the next prompt to be built afresh (no provider-side prefix cache is reused)'],
  );
  expect(
    gen !== undefined && gen.previous_generation === before.generation && gen.generation !== before.generation,
    n,
    'the compaction should move the context generation',
  );
  const scribeNow = await rt.process(scribe.pid);
  const afterTurns = (await rt.llmCalls({ pid: scribe.pid, limit: 10_000 })).length;
  n = step(`the scribe went on working under its compacted context: ${afterTurns} model turns in all, now ${scribeNow.status}`);
  expect(
    scribeNow.status === 'exited' && afterTurns === BEFORE + AFTER + 1,
    n,
    `the scribe should finish its shift (it is ${scribeNow.status}, ${afterTurns} turns)`,
  );
  return {
    scribe: scribe.pid,
    window,
    compressors,
    old_version: result?.old_version ?? null,
    new_version: result?.new_version ?? null,
    generation: { before: gen?.previous_generation ?? null, after: gen?.generation ?? null },
    context_after: after,
  };
}
