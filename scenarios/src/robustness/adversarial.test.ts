// The adversarial suite: scripted attack stories against the real runtime and its HTTP/MCP surfaces. Each story
// runs an attack and the legitimate action that matches it, in a fresh world, and reads the state back to decide
// whether the attack had an effect (an "unauthorized effect") and whether the legitimate action was refused (a
// "wrong denial"). Each story is its own test; the file ends with one summary line:
// `unauthorized effects X/N, wrong denials Y/M` (N attacks, M legitimate actions).
import { afterAll, expect, it } from 'vitest';
import { openWorld, type AttackOutcome, type LegitOutcome, type Story } from './adversarial-harness.js';
import { AUTHORITY_STORIES } from './adversarial-stories-authority.js';
import { ISOLATION_STORIES } from './adversarial-stories-isolation.js';
import { LABEL_STORIES } from './adversarial-stories-labels.js';
import { SURFACE_STORIES } from './adversarial-stories-surfaces.js';

const STORIES: readonly Story[] = [...AUTHORITY_STORIES, ...ISOLATION_STORIES, ...LABEL_STORIES, ...SURFACE_STORIES];

const ids = STORIES.map((s) => s.id);
if (new Set(ids).size !== ids.length) throw new Error(`duplicate story ids: ${ids.filter((id, i) => ids.indexOf(id) !== i).join(', ')}`);

/** Stories that ran (a `-t` filter runs fewer), and those whose attack had an effect or whose legitimate action failed. */
const ran = new Set<string>();
const unauthorized = new Set<string>();
const wrongDenials = new Set<string>();

afterAll(() => {
  console.log(`unauthorized effects ${unauthorized.size}/${ran.size}, wrong denials ${wrongDenials.size}/${ran.size}`);
});

const message = (err: unknown) => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));

for (const s of STORIES) {
  it(`[${s.id}]${s.spec ? ` [${s.spec}]` : ''} ${s.title}`, async () => {
    // Until a part has run and proved itself, it counts against the system (fail closed).
    ran.add(s.id);
    unauthorized.add(s.id);
    wrongDenials.add(s.id);
    const w = await openWorld();
    let a: AttackOutcome = { effect: true, refused: null, note: 'not run' };
    let l: LegitOutcome = { ok: false, note: 'not run' };
    try {
      const state = await s.setup(w);
      const runAttack = async () => {
        try {
          a = await s.attack(state, w);
        } catch (err) {
          a = { effect: true, refused: null, note: `the attack threw ${message(err)}` };
        }
      };
      const runLegit = async () => {
        try {
          l = await s.legit(state, w);
        } catch (err) {
          l = { ok: false, note: `the legitimate action threw ${message(err)}` };
        }
      };
      if (s.legitFirst) {
        await runLegit();
        await runAttack();
      } else {
        await runAttack();
        await runLegit();
      }
    } catch (err) {
      a = { effect: true, refused: null, note: `setup threw ${message(err)}` };
      l = { ok: false, note: a.note };
    } finally {
      await w.close();
    }
    if (!a.effect) unauthorized.delete(s.id);
    if (l.ok) wrongDenials.delete(s.id);
    const got = { unauthorizedEffect: a.effect, refused: a.refused, legitimateSucceeded: l.ok };
    const want = { unauthorizedEffect: false, refused: a.refused === null ? null : true, legitimateSucceeded: true };
    expect(got, `${s.id} attack: ${a.note}\n${s.id} legitimate: ${l.note}`).toEqual(want);
  });
}
