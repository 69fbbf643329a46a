import { openRuntime, type Runtime } from '@libos/kernel';
import { afterEach, expect, it } from 'vitest';
import { weather } from './index.js';

let rt: Runtime | undefined;
afterEach(async () => {
  await rt?.close();
  rt = undefined;
});

it('weather: a process activates the Skill, gets get_weather in its table, and still needs weather:<city> read', async () => {
  rt = await openRuntime({ path: ':memory:', plugins: [weather()] });
  const p = await rt.spawn({ goal: 'What is the weather in Oslo?' });

  // Activating needs execute on skill:weather; then the tool is in this process's table.
  expect(await rt.call(p.pid, 'activate_skill', { skill_id: 'weather' })).toMatchObject({
    ok: false,
    error: { code: 'permission_denied' },
  });
  await rt.grant(p.pid, 'skill:weather', ['execute']);
  expect(await rt.call(p.pid, 'activate_skill', { skill_id: 'weather' })).toMatchObject({
    ok: true,
    payload: { tool_names: ['get_weather'] },
  });

  // In the table, but each call still needs its capability.
  expect(await rt.call(p.pid, 'get_weather', { city: 'Oslo' })).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
  await rt.grant(p.pid, 'weather:*', ['read']);
  expect(await rt.call(p.pid, 'get_weather', { city: 'Oslo' })).toMatchObject({
    ok: true,
    payload: { city: 'oslo', celsius: 4, sky: 'overcast' },
  });

  // The plugin's own code, under its category; bad arguments never reach run.
  expect(await rt.call(p.pid, 'get_weather', { city: 'Atlantis' })).toMatchObject({
    ok: false,
    error: { code: 'weather_city_unknown', category: 'not_found', details: { field: 'city' } },
  });
  expect(await rt.call(p.pid, 'get_weather', { city: '' })).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
});
