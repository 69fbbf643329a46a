import { LibosError } from '@libos/sdk';
import type { LlmProfile } from '../config/host-config.js';
import type { LlmScript } from './llm-script.js';
import { openAiProviderFromEnv, type OpenAiProviderOptions } from './openai-provider.js';
import type { LlmProvider } from './provider.js';
import { ScriptedProvider } from './scripted-provider.js';

export interface ProfileProviderOptions {
  /** Where `LIBOS_OPENAI_API_KEY` (or `OPENAI_API_KEY`) and a fallback base URL come from; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The turns of a `script` profile (required for one). */
  readonly script?: LlmScript;
  /** Extra OpenAI provider options (a test's `fetch`, a timeout); the profile's model, URL and max_tokens win. */
  readonly openai?: Partial<OpenAiProviderOptions>;
}

/**
 * The provider a host config profile describes: an OpenAI-compatible endpoint sending the profile's `model` and
 * `max_tokens` to its `base_url` (else `LIBOS_OPENAI_BASE_URL` / `OPENAI_BASE_URL`, else OpenAI), the key from the
 * environment only (a config file holds no secret); or the scripted provider over `script`, reporting the profile's
 * model. Whether a reply may hold a batch is the executor's part (`RunOptions.profile`).
 *
 * @example
 * const profile = rt.llmProfile('small')!;
 * await rt.run({ provider: providerFromProfile(profile), profile });
 */
export function providerFromProfile(profile: LlmProfile, opts: ProfileProviderOptions = {}): LlmProvider {
  if (profile.provider === 'script') {
    if (!opts.script) {
      throw new LibosError('invalid_arguments', `profile ${profile.name}: provider script needs a script (libos run --script <file>)`, {
        details: { field: 'script', profile: profile.name },
      });
    }
    return new ScriptedProvider(opts.script, { model: profile.model });
  }
  return openAiProviderFromEnv(opts.env ?? process.env, {
    ...opts.openai,
    model: profile.model,
    maxTokens: profile.max_tokens,
    ...(profile.base_url !== undefined ? { baseUrl: profile.base_url } : {}),
  });
}
