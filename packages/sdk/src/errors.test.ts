import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { defineErrorCodes, errorCategoryOf, isLibosError, LibosError } from './errors.js';
import { definePlugin } from './plugin.js';

// The CommonJS build of this package: a second copy of the module, as when an ESM host loads a CJS plugin.
const CJS = fileURLToPath(new URL('../dist/index.cjs', import.meta.url));

describe('LibosError codes', () => {
  it('a kernel code carries its category; an undeclared code is refused at construction', () => {
    expect(new LibosError('store_locked', 'x')).toMatchObject({ code: 'store_locked', category: 'unavailable', httpStatus: 503 });
    expect(() => new LibosError('sdk_test_never_declared', 'x')).toThrow(/unknown code "sdk_test_never_declared"/);
    // Wrapped, an undeclared code is internal_error (what the ToolBroker reports).
    let thrown: unknown;
    try {
      new LibosError('sdk_test_never_declared', 'x');
    } catch (err) {
      thrown = err;
    }
    expect(LibosError.from(thrown)).toMatchObject({ code: 'internal_error', category: 'internal' });
  });

  it('a plugin declares its own codes under the closed categories, through definePlugin or defineErrorCodes', () => {
    definePlugin({
      name: 'sdk-test-weather',
      version: '1.0.0',
      skills: [],
      tools: [],
      errorCodes: { sdk_test_weather_down: 'unavailable' },
    });
    const e = new LibosError('sdk_test_weather_down', 'city: no answer', { details: { field: 'city' } });
    expect(e.toJSON()).toEqual({
      code: 'sdk_test_weather_down',
      category: 'unavailable',
      message: 'city: no answer',
      details: { field: 'city' },
    });
    expect(e.httpStatus).toBe(503);
    expect(isLibosError(e)).toBe(true);
    // Declaring it again with the same category is fine; another category, a kernel code or a bad name is not.
    expect(defineErrorCodes('sdk-test-weather', { sdk_test_weather_down: 'unavailable' })).toEqual({
      sdk_test_weather_down: 'unavailable',
    });
    expect(() => defineErrorCodes('other', { sdk_test_weather_down: 'conflict' })).toThrow(
      /already declared by sdk-test-weather under unavailable/,
    );
    expect(() => defineErrorCodes('other', { not_found: 'not_found' })).toThrow(/is a kernel code/);
    expect(() => defineErrorCodes('other', { 'Bad-Code': 'conflict' })).toThrow(/lower_snake/);
    expect(() => defineErrorCodes('other', { sdk_test_odd: 'teapot' as 'conflict' })).toThrow(/must be one of invalid_argument/);
    expect(errorCategoryOf('sdk_test_odd')).toBeUndefined();
  });

  it('a plain Error named LibosError is not one (the brand decides, not the name)', () => {
    const fake = Object.assign(new Error('x'), { name: 'LibosError', code: 'not_found', category: 'not_found' });
    expect(isLibosError(fake)).toBe(false);
    expect(fake instanceof LibosError).toBe(false);
    expect(LibosError.from(fake).code).toBe('internal_error');
  });

  it('[K-57] a LibosError of the CommonJS build is recognised by the ESM copy, plugin codes included', () => {
    if (!existsSync(CJS)) throw new Error(`${CJS} is missing: build @libos/sdk first (npm test builds it)`);
    const cjs = createRequire(import.meta.url)(CJS) as typeof import('./index.js');
    expect(cjs.LibosError).not.toBe(LibosError);
    const fromCjs = new cjs.LibosError('not_found', 'name: no such thing');
    expect(isLibosError(fromCjs)).toBe(true);
    expect(fromCjs instanceof LibosError).toBe(true);
    expect(LibosError.from(fromCjs)).toBe(fromCjs);
    // A code declared through one copy is known to the other: the table is shared.
    cjs.defineErrorCodes('sdk-test-cjs', { sdk_test_cjs_busy: 'conflict' });
    const busy = new LibosError('sdk_test_cjs_busy', 'busy');
    expect(busy.category).toBe('conflict');
    expect(cjs.isLibosError(busy)).toBe(true);
    expect(busy instanceof cjs.LibosError).toBe(true);
  });
});
