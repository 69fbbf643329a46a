import { describe, expect, it } from 'vitest';
import { OutputCapture } from './output-capture.js';
import { completeEnd, forwardToCharBoundary } from './utf8.js';

describe('OutputCapture', () => {
  it('keeps a stream within the bound whole', () => {
    const c = new OutputCapture(16);
    c.push(Buffer.from('hello '));
    c.push(Buffer.from('world'));
    expect(c.result()).toEqual({ text: 'hello world', total_bytes: 11, truncated: false, omitted_bytes: 0 });
  });

  it('keeps head and tail of a longer stream and counts what it left out', () => {
    const c = new OutputCapture(8);
    c.push(Buffer.from('0123456789'));
    c.push(Buffer.from('abcdef'));
    expect(c.result()).toEqual({ text: '0123\n[... 8 bytes omitted ...]\ncdef', total_bytes: 16, truncated: true, omitted_bytes: 8 });
  });

  it('caps 10 MB written in 64 KiB chunks to the bound, with the first and last bytes', () => {
    const c = new OutputCapture(1_000);
    const chunk = Buffer.alloc(65_536, 'x');
    chunk.write('START', 0);
    c.push(chunk);
    for (let i = 1; i < 160; i++) c.push(Buffer.alloc(65_536, 'y'));
    c.push(Buffer.from('END'));
    const r = c.result();
    expect(r.total_bytes).toBe(160 * 65_536 + 3);
    expect(r.truncated).toBe(true);
    expect(r.text.startsWith('START')).toBe(true);
    expect(r.text.endsWith('END')).toBe(true);
    expect(Buffer.byteLength(r.text)).toBeLessThan(1_100);
    expect(r.omitted_bytes).toBe(r.total_bytes - 1_000);
  });

  it('never splits a UTF-8 character at the cut', () => {
    const c = new OutputCapture(6);
    c.push(Buffer.from('ééééééé')); // 14 bytes: the head's third byte starts a character
    const r = c.result();
    expect(r.text).not.toContain('\ufffd');
    // head: 3 bytes = 'é' + a lead byte (dropped); tail: 3 bytes = a continuation byte (dropped) + 'é'
    expect(r).toEqual({ text: 'é\n[... 10 bytes omitted ...]\né', total_bytes: 14, truncated: true, omitted_bytes: 10 });
  });
});

it('completeEnd and forwardToCharBoundary find character edges', () => {
  const e = Buffer.from('aé€');
  expect(completeEnd(e)).toBe(6);
  expect(completeEnd(e.subarray(0, 2))).toBe(1);
  expect(completeEnd(e.subarray(0, 5))).toBe(3);
  expect(forwardToCharBoundary(e, 2)).toBe(3);
});
