import { refuse } from './errors.js';

const REFUSED_NAMES = [
  'LD_.*',
  'DYLD_.*',
  'GIT_.*',
  'PATH',
  'IFS',
  'ENV',
  'BASH_ENV',
  'BASH_FUNC_.*',
  'SHELLOPTS',
  'BASHOPTS',
  'PROMPT_COMMAND',
  'PS4',
  'NODE_OPTIONS',
  'NODE_PATH',
  'PYTHONSTARTUP',
  'PYTHONPATH',
  'PYTHONHOME',
  'PERL5OPT',
  'PERL5LIB',
  'RUBYOPT',
  'RUBYLIB',
];
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/**
 * Variables a caller may not set: they make a program load or run other code than the one granted (loader preloads,
 * shell startup files, interpreter options, git's command hooks) or change which program a name resolves to.
 */
const REFUSED = new RegExp(`^(${REFUSED_NAMES.join('|')})$`);
/** Bounds of the variables a caller adds. */
export const ENV_LIMITS = { count: 64, valueChars: 32_768 } as const;

/**
 * The environment of a command: the host's variables named in `allowlist` (when set), plus the caller's `extra`
 * variables, each name checked and refused (`invalid_arguments`, naming it) when it could redirect what runs.
 *
 * @example
 * scrubbedEnv({ PATH: '/usr/bin', AWS_SECRET_ACCESS_KEY: 'x' }, ['PATH'], { CI: '1' }); // { PATH: '/usr/bin', CI: '1' }
 */
export function scrubbedEnv(
  host: NodeJS.ProcessEnv,
  allowlist: readonly string[],
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of allowlist) {
    const v = host[name];
    if (typeof v === 'string') env[name] = v;
  }
  const names = Object.keys(extra);
  if (names.length > ENV_LIMITS.count)
    throw refuse('invalid_arguments', 'environment_variable', `env: at most ${ENV_LIMITS.count} variables (got ${names.length})`, {
      field: 'env',
    });
  for (const name of names) {
    const value = extra[name]!;
    const field = `env.${name}`;
    if (!NAME.test(name))
      throw refuse('invalid_arguments', 'environment_variable', `${field}: a variable name must match ${NAME}`, { field });
    if (REFUSED.test(name))
      throw refuse(
        'invalid_arguments',
        'environment_variable',
        `${field}: may not be set by a caller (it can change what program runs or what code it loads)`,
        { field },
      );
    if (value.includes('\u0000')) throw refuse('invalid_arguments', 'nul_byte', `${field}: contains a NUL byte`, { field });
    if (value.length > ENV_LIMITS.valueChars)
      throw refuse('invalid_arguments', 'environment_variable', `${field}: must be at most ${ENV_LIMITS.valueChars} characters`, { field });
    env[name] = value;
  }
  return env;
}
