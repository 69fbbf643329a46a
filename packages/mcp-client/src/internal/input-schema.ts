import { z } from '@libos/sdk';

/**
 * The zod input of an external tool, from the JSON Schema it listed, so the broker validates arguments before they
 * leave and a model sees the same shape. A schema zod cannot express as an object becomes an open object (the
 * server still validates).
 */
export function inputSchemaOf(schema: Readonly<Record<string, unknown>>): z.ZodObject {
  try {
    const s = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
    if (s instanceof z.ZodObject) return s as z.ZodObject;
  } catch {
    // an unsupported keyword: fall through to an open object
  }
  return z.looseObject({});
}
