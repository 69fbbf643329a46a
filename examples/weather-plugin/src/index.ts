import { definePlugin, defineTool, LibosError, skillFromFile, z, type Plugin } from '@libos/sdk';

/** The Skill ships in the package (`"files": ["dist", "skills"]`) and is read when the plugin is built. */
const WEATHER_SKILL = new URL('../skills/weather/SKILL.md', import.meta.url);

/** What the example serves. A real plugin would ask a weather service here (and declare `sideEffects` if it wrote). */
const READINGS: Readonly<Record<string, { celsius: number; sky: string; wind_kmh: number }>> = {
  oslo: { celsius: 4, sky: 'overcast', wind_kmh: 18 },
  lisbon: { celsius: 19, sky: 'clear', wind_kmh: 12 },
  nairobi: { celsius: 24, sky: 'scattered clouds', wind_kmh: 9 },
};

/** `get_weather {city}`: needs read on `weather:<city>`; an unknown city is the plugin's own `weather_city_unknown`. */
export const getWeather = defineTool({
  name: 'get_weather',
  description: 'Current weather for one city: temperature in degrees Celsius, sky and wind. Needs read on weather:<city>.',
  input: z.object({ city: z.string().trim().min(1).max(80).describe('a city name, e.g. Oslo') }),
  output: z.object({ city: z.string(), celsius: z.number(), sky: z.string(), wind_kmh: z.number() }),
  async run({ city }, ctx) {
    const key = city.toLowerCase().replace(/\s+/g, '-');
    // Visibility is never authority: the host (or a parent, or a human) grants weather:<city> read.
    await ctx.authority.require(`weather:${key}`, 'read');
    const reading = READINGS[key];
    if (!reading) {
      throw new LibosError(
        'weather_city_unknown',
        `city: no weather for ${JSON.stringify(city)} (known: ${Object.keys(READINGS).join(', ')})`,
        {
          details: { field: 'city', known: Object.keys(READINGS) },
        },
      );
    }
    return { city: key, ...reading };
  },
});

/**
 * The plugin: one Skill, its tool, and the error codes it throws, each under one of the closed categories (the
 * category decides the HTTP status and MCP isError). No image: any process that activates the Skill can call it.
 *
 * @example
 * const rt = await openRuntime({ path: ':memory:', plugins: [weather()] });
 */
export function weather(): Plugin {
  return definePlugin({
    name: '@acme/libos-weather',
    version: '1.0.0',
    skills: [skillFromFile(WEATHER_SKILL)],
    tools: [getWeather],
    errorCodes: { weather_city_unknown: 'not_found' },
  });
}

export default weather;
