import { describe, expect, it } from 'vitest';
import { hooksAt, type CallHook } from './hooks.js';

const noop = async () => {};

describe('hooksAt', () => {
  it('[K-9.21] lists the hooks that implement a point, in registration order, found once per hook list', () => {
    const mailbox: CallHook = { name: 'mailbox', admit: noop, notices: async () => [] };
    const runner: CallHook = { name: 'runner', settled: noop };
    const results: CallHook = { name: 'results', admit: noop, completed: noop, settled: noop };
    const hooks = [mailbox, runner, results];
    expect(hooksAt(hooks, 'admit').map((h) => h.name)).toEqual(['mailbox', 'results']);
    expect(hooksAt(hooks, 'settled').map((h) => h.name)).toEqual(['runner', 'results']);
    expect(hooksAt(hooks, 'started')).toEqual([]);
    expect(hooksAt(hooks, 'admit')).toBe(hooksAt(hooks, 'admit'));
    // Another list (a test's own hooks) is looked at on its own.
    expect(hooksAt([runner], 'admit')).toEqual([]);
  });
});
