import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { LibosError, z } from '@libos/sdk';
import { mcpServersSchema } from './mcp-servers.js';

/** File names looked for in the store's folder, in this order; two of them at once is an error. */
export const HOST_CONFIG_FILE_NAMES = ['libos.config.json', 'libos.config.yaml', 'libos.config.yml'] as const;

/** How a process sees its LLM context: the source sections only, or a persistent `llm_context:<pid>` Object. */
export const LLM_CONTEXT_POLICIES = ['source_only', 'llm_context_object'] as const;
export type LlmContextPolicy = (typeof LLM_CONTEXT_POLICIES)[number];

/** Providers a profile can name: an OpenAI-compatible endpoint, or the deterministic scripted provider. */
export const LLM_PROFILE_PROVIDERS = ['openai', 'script'] as const;

/** Profile names: what `libos run --profile <name>` and `default_profile` say. */
export const PROFILE_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** The longest `sleep.max_seconds` a host may configure (one day). */
export const MAX_CONFIGURABLE_SLEEP_SECONDS = 86_400;

/** True for `UTC` in any case and for every zone `Intl` knows (IANA names such as `Asia/Shanghai`). */
export function isIanaTimezone(tz: string): boolean {
  if (tz.toLowerCase() === 'utc') return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const positiveInt = (max: number) =>
  z
    .number({ error: 'must be a positive integer' })
    .int({ error: 'must be a positive integer' })
    .positive({ error: 'must be a positive integer' })
    .max(max, { error: `must be at most ${max}` });

const httpUrl = z.string({ error: 'must be an http(s) URL' }).refine(
  (s) => {
    try {
      const u = new URL(s);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  },
  { error: 'must be an http(s) URL such as http://127.0.0.1:11434/v1' },
);

/** One named LLM profile: which provider and model, and the window the executor keeps prompts under. */
export const llmProfileSchema = z
  .strictObject({
    provider: z.enum(LLM_PROFILE_PROVIDERS, { error: `must be one of ${LLM_PROFILE_PROVIDERS.join(', ')}` }),
    model: z.string({ error: 'must be a non-empty string' }).trim().min(1, { error: 'must be a non-empty string' }).max(200),
    base_url: httpUrl.optional(),
    /** The model's context window in tokens: prompt plus the `max_tokens` reply reserve. */
    context_window: positiveInt(10_000_000),
    /** The reply budget sent to the provider as `max_tokens` (and reserved out of the window). */
    max_tokens: positiveInt(10_000_000),
    /** Whether the model may return a batch; off, the kernel runs only the last valid call of a reply. */
    parallel_tool_calls: z.boolean({ error: 'must be true or false' }).default(false),
  })
  .superRefine((p, ctx) => {
    if (p.max_tokens >= p.context_window) {
      ctx.addIssue({ code: 'custom', path: ['max_tokens'], message: `must be less than context_window (${p.context_window})` });
    }
    if (p.base_url !== undefined && p.provider !== 'openai') {
      ctx.addIssue({ code: 'custom', path: ['base_url'], message: 'applies only to provider openai' });
    }
  });

/**
 * The host config (`libos.config.json` or `.yaml` in the store's folder, or `--config <path>`): strict, so an
 * unknown key is an error rather than a silently ignored typo. Later issues add top-level keys beside these
 * (`mcp_servers`); every key has a default, so `{}` is a valid config.
 *
 * @example
 * ```json
 * { "timezone": "Asia/Shanghai", "sleep": { "max_seconds": 5 },
 *   "llm_context": { "policy": "llm_context_object" },
 *   "llm_profiles": { "small": { "provider": "openai", "model": "gpt-4o-mini", "context_window": 4000, "max_tokens": 512 } },
 *   "default_profile": "small", "plugins": ["@acme/libos-weather", "./plugins/notes.js"] }
 * ```
 */
export const hostConfigSchema = z
  .strictObject({
    /** The default of `get_current_time`'s `timezone` (shown in its schema). */
    timezone: z
      .string({ error: 'must be a string' })
      .min(1, { error: 'must not be empty' })
      .max(64, { error: 'must be at most 64 characters' })
      .refine(isIanaTimezone, { error: 'must be an IANA timezone name such as UTC or Asia/Shanghai' })
      .default('UTC'),
    sleep: z
      .strictObject({
        /** The largest `seconds` one `sleep` call may ask for (shown in its schema). */
        max_seconds: z
          .number({ error: 'must be a number' })
          .positive({ error: 'must be a positive number' })
          .max(MAX_CONFIGURABLE_SLEEP_SECONDS, { error: `must be at most ${MAX_CONFIGURABLE_SLEEP_SECONDS}` })
          .default(60),
      })
      .default({ max_seconds: 60 }),
    llm_context: z
      .strictObject({
        /** `llm_context_object` gives every process a persistent `llm_context:<pid>` Object; `source_only` none. */
        policy: z.enum(LLM_CONTEXT_POLICIES, { error: `must be one of ${LLM_CONTEXT_POLICIES.join(', ')}` }).default('source_only'),
      })
      .default({ policy: 'source_only' }),
    llm_profiles: z
      .record(z.string().regex(PROFILE_NAME_PATTERN, { error: `profile names must match ${PROFILE_NAME_PATTERN}` }), llmProfileSchema, {
        error: 'must be an object of named profiles',
      })
      .default({}),
    /** The profile `libos run` uses without `--profile`. */
    default_profile: z.string({ error: 'must be a string' }).optional(),
    /** External MCP servers (stdio `command` or Streamable HTTP `url`) whose tools become a Skill each (`mcp-<name>`). */
    mcp_servers: mcpServersSchema,
    /**
     * Plugins to load besides the standard ones: package names (found in `node_modules` from the config file's folder
     * up) or paths relative to that folder, e.g. `["@acme/libos-weather", "./plugins/notes.js"]`.
     */
    plugins: z
      .array(z.string({ error: 'must be a package name or a path' }).trim().min(1, { error: 'must not be empty' }).max(1000), {
        error: 'must be a list of package names or paths',
      })
      .max(64, { error: 'must list at most 64 plugins' })
      .default([]),
  })
  .superRefine((c, ctx) => {
    if (c.default_profile !== undefined && !Object.hasOwn(c.llm_profiles, c.default_profile)) {
      const names = Object.keys(c.llm_profiles);
      const known = names.length ? `configured: ${names.join(', ')}` : 'no llm_profiles are configured';
      ctx.addIssue({ code: 'custom', path: ['default_profile'], message: `names no profile in llm_profiles (${known})` });
    }
  });

/** A host config as written (every key optional). */
export type HostConfigInput = z.input<typeof hostConfigSchema>;
/** The effective host config: every default filled in. */
export type HostConfig = z.output<typeof hostConfigSchema>;
export type LlmProfileConfig = z.output<typeof llmProfileSchema>;
/** A profile with its name, as the executor and the provider factory take it. */
export type LlmProfile = LlmProfileConfig & { readonly name: string };

/** One thing wrong with a config: the dotted key path (`llm_profiles.fast.context_window`) and what is wrong. */
export interface HostConfigProblem {
  readonly path: string;
  readonly message: string;
}

function problemsOf(error: z.ZodError): HostConfigProblem[] {
  const out: HostConfigProblem[] = [];
  for (const issue of error.issues) {
    const at = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ path: at ? `${at}.${key}` : key, message: 'unknown key' });
    } else if (issue.code === 'invalid_key') {
      out.push({ path: at || '(root)', message: issue.issues.map((i) => i.message).join('; ') || issue.message });
    } else {
      out.push({ path: at || '(root)', message: issue.message });
    }
  }
  return out;
}

/**
 * Validates a host config value and fills in every default. Throws `invalid_arguments` naming each bad key by its
 * path, e.g. `host config libos.config.json: llm_profiles.fast.context_window: must be a positive integer`.
 *
 * @example
 * parseHostConfig({ timezone: 'Asia/Shanghai' }).sleep.max_seconds; // 60
 */
export function parseHostConfig(value: unknown, source = 'host config'): HostConfig {
  const r = hostConfigSchema.safeParse(value ?? {});
  if (r.success) return r.data;
  const problems = problemsOf(r.error);
  const text = problems.map((p) => `${p.path}: ${p.message}`).join('; ');
  throw new LibosError('invalid_arguments', `${source}: ${text}`, { details: { source, problems } });
}

/** A config and the file it came from (`null`: no file, all defaults). */
export interface LoadedHostConfig {
  readonly config: HostConfig;
  readonly path: string | null;
}

function readConfigFile(path: string): HostConfig {
  const ext = extname(path).toLowerCase();
  if (ext !== '.json' && ext !== '.yaml' && ext !== '.yml') {
    const message = `host config ${path}: the file name must end in .json, .yaml or .yml`;
    throw new LibosError('invalid_arguments', message, { details: { source: path } });
  }
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const message = `host config ${path}: cannot be read (${(err as Error).message})`;
    throw new LibosError('not_found', message, { details: { source: path }, cause: err });
  }
  let value: unknown;
  try {
    value = ext === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    const message = `host config ${path}: not valid ${ext === '.json' ? 'JSON' : 'YAML'}: ${(err as Error).message}`;
    throw new LibosError('invalid_arguments', message, { details: { source: path }, cause: err });
  }
  return parseHostConfig(value ?? {}, `host config ${path}`);
}

/**
 * Loads the host config from a file (`.json`, `.yaml`, `.yml`), or from a folder (the store's): the one
 * `libos.config.json|yaml|yml` in it, or all defaults when it has none. A missing file is `not_found`; two config
 * files in one folder, unparsable text or a bad key is `invalid_arguments` naming the file and the key. Nothing is
 * opened or written: run it before opening a store so a bad config leaves the store untouched.
 *
 * @example
 * const { config } = loadHostConfig('./.libos');          // ./.libos/libos.config.json, if there is one
 * const rt = await openRuntime({ path: './.libos/libos.db', hostConfig: config, plugins: [capabilities(), objectMemory()] });
 */
export function loadHostConfig(pathOrDir: string): LoadedHostConfig {
  if (!existsSync(pathOrDir)) {
    throw new LibosError('not_found', `host config ${pathOrDir}: no such file or folder`, { details: { source: pathOrDir } });
  }
  if (!statSync(pathOrDir).isDirectory()) return { config: readConfigFile(pathOrDir), path: pathOrDir };
  const found = HOST_CONFIG_FILE_NAMES.map((n) => join(pathOrDir, n)).filter((p) => existsSync(p));
  if (found.length > 1) {
    const message = `host config: ${pathOrDir} holds ${found.length} config files (${found.join(', ')}); keep one`;
    throw new LibosError('invalid_arguments', message, { details: { source: pathOrDir, files: found } });
  }
  return found.length === 1 ? { config: readConfigFile(found[0]!), path: found[0]! } : { config: parseHostConfig({}), path: null };
}

/**
 * The host config of a store: the `libos.config.json|yaml|yml` in the folder of `storePath` when there is one, else
 * all defaults (also for `:memory:` and a folder that does not exist yet). Errors as `loadHostConfig`.
 *
 * @example
 * const { config, path } = hostConfigForStore('./.libos/libos.db');
 */
export function hostConfigForStore(storePath: string): LoadedHostConfig {
  // An ephemeral store and a PostgreSQL URL have no folder to hold a config file.
  if (storePath === ':memory:' || /^postgres(?:ql)?:\/\//i.test(storePath)) return { config: parseHostConfig({}), path: null };
  const dir = dirname(resolve(storePath));
  return existsSync(dir) ? loadHostConfig(dir) : { config: parseHostConfig({}), path: null };
}

/**
 * The named profile, or `default_profile` when `name` is omitted (null when there is none). An unknown name is
 * `invalid_arguments` listing the configured ones.
 *
 * @example
 * const { config } = loadHostConfig('./.libos');
 * resolveLlmProfile(config, 'small'); // { name: 'small', provider: 'openai', model: 'gpt-4o-mini', ... }
 */
export function resolveLlmProfile(config: HostConfig, name?: string): LlmProfile | null {
  const chosen = name ?? config.default_profile;
  if (chosen === undefined) return null;
  const p = Object.hasOwn(config.llm_profiles, chosen) ? config.llm_profiles[chosen] : undefined;
  if (!p) {
    const names = Object.keys(config.llm_profiles);
    const known = names.length ? `configured: ${names.join(', ')}` : 'the host config has no llm_profiles';
    throw new LibosError('invalid_arguments', `profile: no llm profile named ${JSON.stringify(chosen)} (${known})`, {
      details: { field: 'profile', profile: chosen, configured: names },
    });
  }
  return { name: chosen, ...p };
}
