import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { covers, coveringResources, overlaps, parseResource } from './resource.js';

describe('resources', () => {
  it('[CAP-2] rejects untyped, bare and inner wildcards; canonicalizes // and trailing /', () => {
    for (const bad of ['*', 'foo', 'fs:ws:src*', 'a:b*c', '', '   ', 'A:x', '1a:x', 'k:', 'k://', 'k:a/*/b', 'k:*x']) {
      expect(() => parseResource(bad), bad).toThrowError(expect.objectContaining({ code: 'resource_invalid' }));
    }
    expect(parseResource('a:x//y/').canonical).toBe('a:x/y');
    expect(parseResource('  a:x///y//z//  ').canonical).toBe('a:x/y/z');
    expect(parseResource('k:a/*/').canonical).toBe('k:a/*');
    expect(() => parseResource(42)).toThrowError(/must be a string/);
  });

  it('[CAP-2] a text parsed again gives the same answer: a kept parse for good text, the same error for bad', () => {
    const first = parseResource(' a:x//y/ ');
    expect(parseResource(' a:x//y/ ')).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    for (let i = 0; i < 2; i++) expect(() => parseResource('a:b*c')).toThrowError(expect.objectContaining({ code: 'resource_invalid' }));
    // more distinct text than is kept (2,048-character texts, past 1 Mi characters): each still parses to its own form
    const long = (i: number) => `k:${String(i).padStart(2_000, 'r')}`;
    for (let i = 0; i < 1_000; i++) expect(parseResource(`${long(i)}//`).canonical).toBe(long(i));
    expect(parseResource(' a:x//y/ ').canonical).toBe('a:x/y');
  });

  it('names the bad value in the error', () => {
    expect(() => parseResource('fs:ws:src*')).toThrowError(/"fs:ws:src\*"/);
  });

  it('[CAP-1] subtree covers itself and descendants, never a sibling with the same prefix', () => {
    const g = 'filesystem:workspace:src/*';
    expect(covers(g, 'filesystem:workspace:src/a.py')).toBe(true);
    expect(covers(g, 'filesystem:workspace:src')).toBe(true);
    expect(covers(g, 'filesystem:workspace:src2/a.py')).toBe(false);
  });

  it('[CAP-3] prefix covers by segment, not by raw startsWith', () => {
    expect(covers('image:cc:*', 'image:cc:v0')).toBe(true);
    expect(covers('image:cc:*', 'image:ccX:v0')).toBe(false);
    expect(covers('image:cc:*', 'image:cc')).toBe(true);
  });

  it('[CAP-4] covers is set inclusion for patterns too', () => {
    expect(covers('object:a', 'object:a/*')).toBe(false);
    expect(covers('k:a/*', 'k:a/b/*')).toBe(true);
    expect(covers('k:a/*', 'k:a:*')).toBe(false);
    expect(covers('k:*', 'k:a:*')).toBe(true);
    expect(covers('k:a:*', 'k:*')).toBe(false);
    expect(covers('k:a:*', 'k:a:b/*')).toBe(true);
    expect(covers('k:a/*', 'k:a/b:*')).toBe(true);
    expect(covers('process:*', 'process:spawn')).toBe(true);
  });

  it('kinds never cross', () => {
    expect(covers('object:*', 'objects:a')).toBe(false);
    expect(overlaps('object:*', 'object_namespace:a')).toBe(false);
  });

  it('overlaps is set intersection', () => {
    expect(overlaps('filesystem:*', 'filesystem:secret')).toBe(true);
    expect(overlaps('k:a/*', 'k:a:*')).toBe(true);
    expect(overlaps('k:a/b', 'k:a:b')).toBe(false);
    expect(overlaps('k:a/b/*', 'k:a/*')).toBe(true);
    expect(overlaps('k:a:*', 'k:b:*')).toBe(false);
    expect(overlaps('k:a:*', 'k:a:b/*')).toBe(true);
  });

  // Concrete bodies over a tiny alphabet; a pattern's denotation is checked by brute force on them.
  const seg = fc.constantFrom('a', 'b', 'ab');
  const body = fc
    .array(fc.tuple(seg, fc.constantFrom(':', '/')), { minLength: 0, maxLength: 3 })
    .chain((parts) => seg.map((last) => parts.map(([s, sep]) => s + sep).join('') + last));
  const pattern = fc.oneof(
    body.map((b) => `k:${b}`),
    body.map((b) => `k:${b}:*`),
    body.map((b) => `k:${b}/*`),
    fc.constant('k:*'),
  );
  const concretes: string[] = [];
  {
    const segs = ['a', 'b', 'ab'];
    const grow = (prefix: string, depth: number) => {
      for (const s of segs) {
        concretes.push(prefix + s);
        if (depth < 3) for (const sep of [':', '/']) grow(prefix + s + sep, depth + 1);
      }
    };
    grow('', 0);
  }
  const inDen = (p: string, s: string) => covers(p, `k:${s}`);

  it('covers agrees with brute-force inclusion over a finite universe', () => {
    fc.assert(
      fc.property(pattern, pattern, (g, r) => {
        const brute = concretes.filter((s) => inDen(r, s)).every((s) => inDen(g, s));
        // Brute force over a finite universe can only over-approximate inclusion of an infinite set.
        if (covers(g, r)) expect(brute).toBe(true);
        if (parseResource(r).form === 'exact') expect(covers(g, r)).toBe(brute);
      }),
      { numRuns: 2000 },
    );
  });

  it('coveringResources lists every pattern that covers a resource (the keys a check looks up)', () => {
    expect(coveringResources('k:a/b')).toEqual(['k:*', 'k:a/b', 'k:a/b:*', 'k:a/b/*', 'k:a/*']);
    expect(coveringResources('k:*')).toEqual(['k:*']);
    fc.assert(
      fc.property(pattern, pattern, (g, r) => {
        if (covers(g, r)) expect(coveringResources(r)).toContain(parseResource(g).canonical);
      }),
      { numRuns: 4000 },
    );
    // Exhaustively over short bodies: every covering pattern is listed, and nothing listed fails to cover.
    const short = concretes.filter((c) => c.split(/[:/]/).length <= 3);
    const all = short
      .flatMap((c) => [`k:${c}`, `k:${c}:*`, `k:${c}/*`])
      .concat('k:*')
      .map((x) => parseResource(x));
    for (const r of all) {
      const keys = new Set(coveringResources(r));
      const missing = all.filter((g) => covers(g, r) && !keys.has(g.canonical)).map((g) => g.canonical);
      expect(missing, r.canonical).toEqual([]);
    }
  });

  it('overlaps agrees with brute-force intersection', () => {
    fc.assert(
      fc.property(pattern, pattern, (a, b) => {
        const brute = concretes.some((s) => inDen(a, s) && inDen(b, s));
        if (brute) expect(overlaps(a, b)).toBe(true);
        expect(overlaps(a, b)).toBe(overlaps(b, a));
      }),
      { numRuns: 2000 },
    );
  });
});
