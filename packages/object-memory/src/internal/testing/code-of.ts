/** The LibosError code a synchronous call throws, or undefined when it returns (test helper). */
export function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return (err as { code?: string }).code;
  }
  return undefined;
}
