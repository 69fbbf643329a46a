import { LibosError, sha256Hex } from '@libos/sdk';
import { parseArguments } from '../broker/parse-arguments.js';
import { jsonDigest, type ParsedCall, type ResolvedCall } from './call-state.js';
import { hooksAt, type CallHook } from './hooks.js';

/**
 * Step 3: the arguments parse against the tool's `input` (size-capped), else `invalid_arguments`, and nothing else
 * runs. The parsed arguments are canonicalised once: their digest is every audit row's `args_sha256`, and the same
 * text gives the approval hash.
 */
export function parseCallArguments(call: ResolvedCall): ParsedCall {
  if (call.rejectArguments)
    throw new LibosError('invalid_arguments', `arguments of ${call.toolName} are not a JSON object: ${call.rejectArguments}`);
  const args = parseArguments(call.tool, call.rawArgs);
  const { text, sha256, bytes } = jsonDigest(args);
  let approval: string | null = null;
  return {
    ...call,
    args,
    argsDigest: { sha256, bytes },
    // canonicalJson({ args, tool }): keys sorted, so the arguments' own canonical text is reused as is.
    approvalHash: () => (approval ??= sha256Hex(`{"args":${text ?? 'null'},"tool":${JSON.stringify(call.toolName)}}`)),
  };
}

/** Step 3, once parsed: every hook may refuse the call before it is charged (e.g. a human rejected its approval). */
export async function admitParsed(call: ParsedCall, hooks: readonly CallHook[]): Promise<void> {
  for (const h of hooksAt(hooks, 'admitParsed')) await h.admitParsed(call);
}
