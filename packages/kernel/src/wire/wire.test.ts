// The casing boundary: the Runtime's TypeScript records are camelCase, their wire JSON is snake_case, and what a record
// carries as data (audit details, event data, message payloads, ...) keeps its own keys on both sides.
import { SERVICE_NAMES, type HumanService } from '@libos/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import type { LlmCallRecord } from '../executor/llm-calls.js';
import { notesPluginWithImage } from '../internal/testing/notes-plugin.js';
import { openRuntime, type Runtime } from '../runtime.js';
import * as wire from './wire.js';

/** Fields whose values are data, not field names: their own keys are not checked (nor renamed). */
const OPAQUE = new Set([
  'details',
  'data',
  'payload',
  'response',
  'request',
  'wait_state',
  'waitState',
  'outcome',
  'constraints',
  'metadata',
  'labels',
  'provenance',
  'limits',
  'usage',
  'remaining',
  'input_schema',
  'inputSchema',
]);
/** Fields keyed by names (skill ids): their keys are data, their values records. */
const KEYED = new Set(['loaded_skills', 'loadedSkills']);

/** Every field name in a JSON value, outside opaque fields. */
function fieldNames(v: unknown, out: string[] = []): string[] {
  if (Array.isArray(v)) for (const x of v) fieldNames(x, out);
  else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      out.push(k);
      if (OPAQUE.has(k)) continue;
      if (KEYED.has(k)) for (const inner of Object.values(x as object)) fieldNames(inner, out);
      else fieldNames(x, out);
    }
  }
  return out;
}

const SNAKE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;
const CAMEL = /^[a-z][a-zA-Z0-9]*$/;
const json = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

let rt: Runtime | null = null;
afterEach(async () => {
  await rt?.close();
  rt = null;
});

/** One of each record a host reads, with camelCase keys in the data they carry. */
async function records() {
  rt = await openRuntime({ path: ':memory:', plugins: [notesPluginWithImage()] });
  const p = await rt.spawn({ image: 'notes-agent:v0', goal: 'keep notes' });
  await rt.activateSkill(p.pid, 'test-notes');
  const cap = await rt.grant(p.pid, 'clock:now', ['read'], { uses: 2, expiresAt: '2999-01-01T00:00:00.000Z' });
  const message = await rt.sendMessage(p.pid, { camelKey: 1, snake_key: 2 }, { channel: 'ops' });
  await rt.record({
    event: { type: 'host_note', data: { camelKey: 'kept' } },
    audit: { action: 'host.note', target: 'host', details: { camelKey: 'kept' } },
  });
  const human = await rt.transaction((scope) =>
    scope.service<HumanService>(SERVICE_NAMES.human).create(p.pid, { kind: 'question', prompt: 'ok?', details: { camelKey: 1 } }),
  );
  const llmCall: LlmCallRecord = {
    id: 'llm_0000000000000001',
    pid: p.pid,
    imageId: 'notes-agent:v0',
    purpose: 'turn',
    status: 'ok',
    provider: 'script',
    model: 'scripted',
    promptTokens: 1,
    completionTokens: 2,
    totalTokens: 3,
    inputEstimateTokens: null,
    latencyMs: 4,
    error: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    request: { camelKey: 1 },
    response: { camelKey: 2 },
  };
  return {
    process: await rt.process(p.pid),
    budget: await rt.budget(p.pid),
    audit: (await rt.audit({ action: 'host.note' }))[0]!,
    event: (await rt.events({ type: 'host_note' }))[0]!,
    skill: rt.skillCatalog()[0]!,
    tool: (await rt.toolSchemas(p.pid))[0]!,
    plugin: rt.loadedPlugins()[0]!,
    message,
    cap,
    human,
    llmCall,
  };
}

describe('wire: one casing rule, one mapping', () => {
  it('[K-62] the Runtime returns camelCase records; their wire JSON is snake_case; data they carry keeps its keys', async () => {
    const r = await records();
    for (const v of Object.values(r)) for (const k of fieldNames(v)) expect(k).toMatch(CAMEL);
    const wires = {
      process: wire.processToWire(r.process),
      detail: wire.processDetailToWire(r.process, r.budget),
      audit: wire.auditToWire(r.audit),
      event: wire.eventToWire(r.event),
      skill: wire.skillToWire(r.skill),
      tool: wire.toolSchemaToWire(r.tool),
      plugin: wire.pluginToWire(r.plugin),
      message: wire.messageToWire(r.message),
      cap: wire.capabilityToWire(r.cap),
      human: wire.humanRequestToWire(r.human),
      llmCall: wire.llmCallToWire(r.llmCall),
    };
    for (const [name, w] of Object.entries(wires)) {
      const bad = fieldNames(json(w)).filter((k) => !SNAKE.test(k));
      expect(bad, name).toEqual([]);
    }
    expect(wires.process).toMatchObject({ parent_pid: null, image_id: 'notes-agent:v0', state_generation: expect.any(Number) });
    expect(wires.process.loaded_skills['test-notes']).toEqual({
      package_sha256: r.process.loadedSkills['test-notes']!.packageSha256,
      tools: r.process.loadedSkills['test-notes']!.tools,
    });
    expect(wires.skill).toMatchObject({ skill_id: r.skill.skillId, package_sha256: r.skill.packageSha256 });
    expect(wires.tool.input_schema).toBe(r.tool.inputSchema);
    expect(wires.cap).toMatchObject({ uses_remaining: 2, expires_at: '2999-01-01T00:00:00.000Z', issuer_cap_id: null });
    // Opaque data crosses as it is, camelCase keys and all.
    expect(wires.audit.details).toEqual({ camelKey: 'kept' });
    expect(wires.event.data).toEqual({ camelKey: 'kept' });
    expect(wires.message.payload).toEqual({ camelKey: 1, snake_key: 2 });
    expect(wires.human.details).toEqual({ camelKey: 1 });
    expect(wires.llmCall).toMatchObject({ latency_ms: 4, request: { camelKey: 1 }, response: { camelKey: 2 } });
  });

  it('[K-62] each fromWire mapper undoes its toWire mapper (what the CLI reads back from a server equals the Runtime)', async () => {
    const r = await records();
    expect(wire.processFromWire(json(wire.processToWire(r.process)) as wire.ProcessWire)).toEqual(r.process);
    expect(wire.budgetFromWire(json(wire.budgetToWire(r.budget)) as wire.BudgetWire)).toEqual(json(r.budget));
    expect(wire.auditFromWire(json(wire.auditToWire(r.audit)) as wire.AuditWire)).toEqual(r.audit);
    expect(wire.eventFromWire(json(wire.eventToWire(r.event)) as wire.EventWire)).toEqual(r.event);
    expect(wire.skillFromWire(json(wire.skillToWire(r.skill)) as wire.SkillWire)).toEqual(r.skill);
    expect(wire.messageFromWire(json(wire.messageToWire(r.message)) as wire.MessageWire)).toEqual(r.message);
    expect(wire.capabilityFromWire(json(wire.capabilityToWire(r.cap)) as wire.CapabilityWire)).toEqual(r.cap);
    expect(wire.humanRequestFromWire(json(wire.humanRequestToWire(r.human)) as wire.HumanRequestWire)).toEqual(r.human);
    expect(wire.llmCallFromWire(json(wire.llmCallToWire(r.llmCall)) as wire.LlmCallWire)).toEqual(r.llmCall);
  });

  it('[K-62] a message reads camelCase from the Runtime and snake_case (as read_messages shows it) on the wire', async () => {
    const r = await records();
    const [m] = await rt!.messages(r.process.pid);
    expect(m).toEqual(r.message);
    expect(m).toMatchObject({ messageId: expect.stringMatching(/^msg_/), recipientPid: r.process.pid, channel: 'ops', ackedAt: null });
    expect(Object.keys(wire.messageToWire(m!)).sort()).toEqual(
      [
        'acked_at',
        'body',
        'channel',
        'correlation_id',
        'created_at',
        'delivery',
        'kind',
        'message_id',
        'payload',
        'recipient_pid',
        'reply_to',
        'sender',
        'status',
        'subject',
      ].sort(),
    );
  });
});
