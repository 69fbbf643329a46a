import { describe, expect, it } from 'vitest';
import { LibosError } from './errors.js';
import { optionalService } from './optional-service.js';

describe('optionalService', () => {
  const pins = { pinned: async () => new Set<string>() };
  const services: Record<string, unknown> = { object_pins: pins };
  const service = <T>(name: string): T => {
    if (!Object.hasOwn(services, name)) throw new LibosError('not_found', `service ${name} is not provided`);
    return services[name] as T;
  };

  it('[K-9.15] a scope that says which services it has is asked, never made to throw', () => {
    let thrown = 0;
    const counted = <T>(name: string): T => {
      try {
        return service<T>(name);
      } catch (err) {
        thrown++;
        throw err;
      }
    };
    const scope = { service: counted, hasService: (name: string) => Object.hasOwn(services, name) };
    expect(optionalService(scope, 'object_pins')).toBe(pins);
    expect(optionalService(scope, 'no_such_service')).toBeUndefined();
    expect(thrown).toBe(0);
  });

  it('[K-9.15] without hasService, not_found means none and any other error still surfaces', () => {
    expect(optionalService({ service }, 'object_pins')).toBe(pins);
    expect(optionalService({ service }, 'no_such_service')).toBeUndefined();
    const broken = {
      service: () => {
        throw new LibosError('internal_error', 'the pins factory failed');
      },
    };
    expect(() => optionalService(broken, 'object_pins')).toThrow('the pins factory failed');
  });
});
