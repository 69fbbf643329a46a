import {
  canonicalJson,
  SERVICE_NAMES,
  sha256Hex,
  type ObjectRef,
  type ObjectsService,
  type ResultsService,
  type ServiceScope,
  type ToolResultInput,
} from '@libos/sdk';
import { namespaces } from '@libos/sdk';

/** Results larger than this (JSON chars) are published as a digest and a preview, not whole. */
export const MAX_PUBLISHED_RESULT_CHARS = 100_000;

/** Characters of a truncated result's JSON kept as its preview. */
export const RESULT_PREVIEW_CHARS = 4_000;

/** Where published results live: a child of the process scope, so they never crowd the model's own listing. */
export const toolResultsNamespace = (pid: string): string => namespaces.toolResults(pid);

/**
 * Publishes a tool's result as an immutable `tool_result` Object in the pid's tool-results namespace, labelled with
 * what the call observed, its provenance naming the Objects it read (unchecked: one may have been released since);
 * a large result as its digest and a preview.
 */
export async function publishToolResult(scope: ServiceScope, input: ToolResultInput): Promise<ObjectRef> {
  const result = input.result ?? null;
  const text = JSON.stringify(result);
  let body: Record<string, unknown>;
  if (text.length <= MAX_PUBLISHED_RESULT_CHARS) body = { ...input.fields, [input.resultField]: result };
  else {
    const canonical = canonicalJson(result);
    const digest = { result_sha256: sha256Hex(canonical), result_bytes: Buffer.byteLength(canonical, 'utf8'), result_chars: text.length };
    body = { ...input.fields, truncated: true, ...digest, preview: text.slice(0, RESULT_PREVIEW_CHARS) };
  }
  return scope.service<ObjectsService>(SERVICE_NAMES.objects).createForProcess(input.pid, {
    type: 'tool_result',
    name: input.name,
    namespace: toolResultsNamespace(input.pid),
    ensureNamespace: true,
    payload: body,
    immutable: true,
    metadata: { title: input.title },
    labels: input.labels,
    sourceOids: input.sourceOids,
    ...(input.attachToView !== undefined ? { attachToView: input.attachToView } : {}),
    ...(input.owner ? { owner: input.owner } : {}),
  });
}

/** The kernel's `results` service, bound to one transaction. */
export const resultsService = (scope: ServiceScope): ResultsService => ({ publish: (input) => publishToolResult(scope, input) });
