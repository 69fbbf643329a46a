import { describe, expect, it } from 'vitest';
import {
  ERROR_CODES,
  PROCESS_END_CODES,
  idPattern,
  isId,
  isTerminalProcessStatus,
  namespaces,
  PROCESS_STATUSES,
  resources,
  sequentialIds,
} from './index.js';

describe('the sdk vocabulary', () => {
  it('builds each resource kind once', () => {
    expect(resources.object('obj_0000000000000001')).toBe('object:obj_0000000000000001');
    expect(resources.namespace('notes/a')).toBe('object_namespace:notes/a');
    expect(resources.process('pid_0000000000000001')).toBe('process:pid_0000000000000001');
    expect(resources.objectTask('task_0000000000000001')).toBe('object_task:task_0000000000000001');
    expect(resources.human('alice')).toBe('human:alice');
    expect(resources.human('alice', 'default')).toBe('human:alice:default');
    expect(resources.mcp('files', 'read')).toBe('mcp:files/read');
    expect(namespaces.toolResults('pid_0000000000000001')).toBe('process:pid_0000000000000001/tool_results');
  });

  it('has one id pattern: idPattern agrees with isId', () => {
    const id = sequentialIds().next('obj');
    expect(idPattern('obj').test(id)).toBe(true);
    expect(isId(id, 'obj')).toBe(true);
    for (const bad of ['obj_1', 'pid_0000000000000001', `${id}0`, 'obj_000000000000000G']) {
      expect(idPattern('obj').test(bad)).toBe(false);
      expect(isId(bad, 'obj')).toBe(false);
    }
    expect(() => idPattern('Obj')).toThrow(TypeError);
  });

  it('knows the terminal process statuses and puts every process-end code in the error table', () => {
    expect(PROCESS_STATUSES.filter((s) => isTerminalProcessStatus(s))).toEqual(['exited', 'failed', 'killed']);
    expect(isTerminalProcessStatus(undefined)).toBe(false);
    for (const code of PROCESS_END_CODES) expect(ERROR_CODES[code]).toBeDefined();
  });
});
