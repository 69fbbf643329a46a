import { randomBytes } from 'node:crypto';
import { constants, deflateRawSync, inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { SyncDeflate } from './sync-deflate.js';

const inflate = (parts: Buffer[]) => inflateRawSync(Buffer.concat(parts), { finishFlush: constants.Z_SYNC_FLUSH });

describe('SyncDeflate', () => {
  it('[K-9.18] each push continues one stream: the pushes so far inflate to the texts so far, later ones refer back', () => {
    const z = SyncDeflate.open()!;
    expect(z).not.toBeNull();
    const texts = [1, 2, 3].map((n) => Buffer.from(`{"n":${n},"rows":"${'the same row text, '.repeat(200)}"}`));
    const parts = texts.map((t) => z.push(t));
    expect(inflate(parts.slice(0, 2))).toEqual(Buffer.concat(texts.slice(0, 2)));
    expect(inflate(parts)).toEqual(Buffer.concat(texts));
    expect(parts[2]!.length).toBeLessThan(parts[0]!.length);
    z.close();
  });

  it('[K-9.18] after a reset a push stands alone; an input larger than the output buffer comes out whole', () => {
    const z = SyncDeflate.open()!;
    z.push(Buffer.from('history '.repeat(1000)));
    z.reset();
    const noise = randomBytes(200_000); // incompressible: its output outgrows the 64 KB buffer
    const out = z.push(noise);
    expect(inflate([out])).toEqual(noise);
    z.close();
  });

  it('[K-9.20] whole deflates one text alone, byte for byte as deflateRawSync does, whatever was pushed before', () => {
    const z = SyncDeflate.open(6)!;
    const text = Buffer.from(`{"recent_events":[${'{"type":"tool_completed","pid":"pid_1"},'.repeat(60)}]}`);
    z.push(Buffer.from('a stream in the middle of a record '.repeat(50))); // never finished: whole starts over
    const first = z.whole(text);
    expect(first).toEqual(deflateRawSync(text, { level: 6 }));
    expect(inflateRawSync(first)).toEqual(text); // a complete stream: no sync-flush reading needed
    const noise = randomBytes(150_000); // its output outgrows the 64 KB buffer
    expect(inflateRawSync(z.whole(noise))).toEqual(noise);
    expect(z.whole(text)).toEqual(first); // and the state is reused, not spent
    expect(inflate([z.push(text)])).toEqual(text); // a push after a finished stream starts a new one
    z.close();
  });
});
