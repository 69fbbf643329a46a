import { once } from 'node:events';
import { existsSync, rmSync, statSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, expectRefused, libosOn, tempStore } from '../testing/libos-bin.js';

// Command-line hygiene (issue 12): every bad flag is a usage error (exit 2, one line, nothing written), and a busy
// port is one line naming it (exit 1).

let dir: string;
let db: string;
let pid: string;

beforeAll(() => {
  assertBuilt();
  ({ dir, db } = tempStore('libos-hygiene-'));
  pid = libosOn(db).json('spawn', '--goal', 'hygiene').pid;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('bad flags', { timeout: 180_000 }, () => {
  it('[K-58] each exits 2 with one line on stderr, and the store is not written', () => {
    const { run } = libosOn(db);
    const cases: [string[], string][] = [
      [['spawn', '--goal', 'x', '--tool-calls', 'abc'], '--tool-calls must be a positive integer'],
      [['spawn'], "required option '--goal <text>' not specified"],
      [['grant', pid, 'skill:x', 'execute', '--uses', '0'], '--uses must be a positive integer'],
      [['grant', pid, 'skill:x', 'execute', '--expires', 'next tuesday'], '--expires must be an ISO-8601 timestamp'],
      [['grant', pid, 'skill:x', 'execute', '--expires', '2030-02-31'], '--expires must be an ISO-8601 timestamp'],
      [['grant', pid, 'skill:x', 'fly'], 'unknown right(s) fly'],
      [['grant', pid, 'skill:x', 'execute', '--effect', 'maybe'], "argument 'maybe' is invalid"],
      [['audit', '--limit', 'abc'], '--limit must be a positive integer'],
      [['events', '--after', 'abc'], '--after must be an event sequence number'],
      [['human', 'list', '--status', 'weird'], "argument 'weird' is invalid"],
      [['run', '--max-quanta', '0'], '--max-quanta must be a positive integer'],
      [['run', '--provider', 'nope'], "argument 'nope' is invalid"],
      [['serve', '--port', '70000'], '--port must be an integer in 0..65535'],
      [['call', pid, 'discover_skills', '{bad'], 'arguments is not valid JSON'],
      [['ps', '--bogus'], "unknown option '--bogus'"],
      [['--plugin'], "option '--plugin <spec>' argument missing"],
    ];
    const before = statSync(db).mtimeMs;
    for (const [args, text] of cases) expectRefused(run(...args), 2, text);
    expect(statSync(db).mtimeMs).toBe(before);
  });

  it('a valid --expires is taken as UTC when it has no offset', () => {
    const cap = libosOn(db).json('grant', pid, 'skill:x', 'execute', '--expires', '2030-01-01T10:00:00');
    expect(cap.expires_at).toBe('2030-01-01T10:00:00.000Z');
  });
});

describe('libos serve on a busy port', { timeout: 120_000 }, () => {
  it('[K-58] is one line naming the address (address_in_use, exit 1)', async () => {
    const busy = createServer();
    busy.listen(0, '127.0.0.1');
    await once(busy, 'listening');
    const port = (busy.address() as AddressInfo).port;
    try {
      const r = libosOn(db).run('serve', '--port', String(port));
      expectRefused(r, 1, `address_in_use: port: 127.0.0.1:${port} is already in use`);
      expect(existsSync(db)).toBe(true);
    } finally {
      busy.close();
    }
  });
});
