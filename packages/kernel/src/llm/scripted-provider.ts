import { LibosError } from '@libos/sdk';
import { DEFAULT_SCRIPT_KEY, loadLlmScriptFile, parseLlmScript, type LlmScript, type ScriptedTurn } from './llm-script.js';
import type { LlmMessage, LlmProvider, LlmRequest, LlmResponse, LlmToolCall, LlmToolSchema } from './provider.js';

/** What the `ScriptedProvider` saw on one call (copies, safe to keep). */
export interface ScriptedRequestRecord {
  readonly messages: LlmMessage[];
  readonly tools: LlmToolSchema[];
  readonly parallelToolCalls: boolean;
  readonly pid: string | undefined;
  readonly imageId: string | undefined;
}

export interface ScriptedProviderOptions {
  /** reported as `LlmResponse.model`; default `scripted` */
  readonly model?: string;
}

/** The call a scripted process makes once its turns are used up. */
const EXHAUSTED_TURN: ScriptedTurn = [{ tool: 'process_exit', args: { payload: { done: true } } }];

/**
 * A deterministic provider for the demo and tests: each `completeAction` returns the next scripted turn
 * (see `LlmScript`), with call ids `mock_1`, `mock_2`, … and usage `{1, 1, 2}`. When the queue is used up it
 * returns one `process_exit` call with `{ payload: { done: true } }`. The whole turn is returned even when
 * `parallelToolCalls` is false, so scripts can exercise batches. Unknown tool names are returned as
 * scripted (the executor handles them).
 *
 * @example
 * const provider = new ScriptedProvider([[{ tool: 'list_objects' }]]);
 * await provider.completeAction({ messages: [], tools: [], parallelToolCalls: false }); // list_objects, id mock_1
 * await provider.completeAction({ messages: [], tools: [], parallelToolCalls: false }); // process_exit { payload: { done: true } }
 * provider.calls; // 2
 */
export class ScriptedProvider implements LlmProvider {
  readonly name = 'scripted';
  readonly model: string;
  /** every request, in call order */
  readonly requests: ScriptedRequestRecord[] = [];
  private readonly script: LlmScript;
  private readonly cursors = new Map<string, number>();
  private nextCallId = 1;

  /** Validates `script` (throws `invalid_arguments` naming the bad field). */
  constructor(script: LlmScript, options: ScriptedProviderOptions = {}) {
    this.script = parseLlmScript(script);
    this.model = options.model ?? 'scripted';
  }

  /**
   * Loads a `.json`, `.yaml` or `.yml` script.
   *
   * @example
   * const provider = await ScriptedProvider.fromFile('./demo/script.yaml');
   */
  static async fromFile(path: string, options: ScriptedProviderOptions = {}): Promise<ScriptedProvider> {
    return new ScriptedProvider(await loadLlmScriptFile(path), options);
  }

  /** How many times `completeAction` was called. */
  get calls(): number {
    return this.requests.length;
  }

  async completeAction(req: LlmRequest): Promise<LlmResponse> {
    if (req.signal?.aborted) throw new LibosError('cancelled', 'scripted provider: request aborted', { cause: req.signal.reason });
    // Copies of each message and tool entry (their fields are strings, or a tool's JSON Schema, which the kernel
    // caches per tool and never changes); a deep clone of every schema per turn cost more than the turn's SQL.
    this.requests.push({
      messages: req.messages.map((m) => ({ ...m })),
      tools: req.tools.map((t) => ({ ...t })),
      parallelToolCalls: req.parallelToolCalls,
      pid: req.pid,
      imageId: req.imageId,
    });
    const { turn, index } = this.nextTurn(req.pid, req.imageId);
    const toolCalls: LlmToolCall[] = turn.map((call) => ({
      id: `mock_${this.nextCallId++}`,
      name: call.tool,
      arguments: structuredClone(call.args ?? {}),
    }));
    return {
      content: null,
      toolCalls,
      api: 'scripted',
      model: this.model,
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      raw: { turn_index: index, exhausted: index === null },
    };
  }

  /** The next turn for `pid` and its index in its queue (`null` once the queue is used up). */
  private nextTurn(pid: string | undefined, imageId: string | undefined): { turn: ScriptedTurn; index: number | null } {
    const { key, turns } = this.queueFor(pid, imageId);
    const index = this.cursors.get(key) ?? 0;
    const turn = turns[index];
    if (turn === undefined) return { turn: EXHAUSTED_TURN, index: null };
    this.cursors.set(key, index + 1);
    return { turn, index };
  }

  private queueFor(pid: string | undefined, imageId: string | undefined): { key: string; turns: ScriptedTurn[] } {
    const script = this.script;
    if (Array.isArray(script)) return { key: '', turns: script };
    if ('turns' in script) return { key: '', turns: script.turns };
    const key = pid ?? DEFAULT_SCRIPT_KEY;
    const queues = script.processes;
    const images = script.images ?? {};
    if (Object.hasOwn(queues, key)) return { key, turns: queues[key]! };
    if (imageId !== undefined && Object.hasOwn(images, imageId)) return { key, turns: images[imageId]! };
    return { key, turns: Object.hasOwn(queues, DEFAULT_SCRIPT_KEY) ? queues[DEFAULT_SCRIPT_KEY]! : [] };
  }
}
