import { expect, it } from 'vitest';
import { DEFAULT_ENV_ALLOWLIST } from '../env-allowlist.js';
import { scrubbedEnv } from './environment.js';

it("keeps only allowlisted host variables, adds the caller's own", () => {
  const host = { PATH: '/usr/bin', HOME: '/root', AWS_SECRET_ACCESS_KEY: 'k', OPENAI_API_KEY: 'sk', LANG: 'C.UTF-8' };
  expect(scrubbedEnv(host, DEFAULT_ENV_ALLOWLIST, { CI: '1' })).toEqual({ PATH: '/usr/bin', HOME: '/root', LANG: 'C.UTF-8', CI: '1' });
});

it.each(['LD_PRELOAD', 'NODE_OPTIONS', 'PATH', 'GIT_SSH_COMMAND', 'BASH_ENV', 'DYLD_INSERT_LIBRARIES', 'bad-name'])(
  'refuses a caller variable %s, naming it',
  (name) => {
    expect(() => scrubbedEnv({}, [], { [name]: 'x' })).toThrow(
      expect.objectContaining({ code: 'invalid_arguments', message: expect.stringContaining(`env.${name}`) }),
    );
  },
);

it('refuses a NUL in a value', () => {
  expect(() => scrubbedEnv({}, [], { A: 'x\u0000y' })).toThrow(expect.objectContaining({ code: 'invalid_arguments' }));
});
