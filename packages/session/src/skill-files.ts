// Resolved from a file directly under src/ so the relative path is the same from src/ (tests) and dist/ (built).
export const RUNTIME_SESSION_SKILL_URL = new URL('../skills/agent-libos-runtime-session/SKILL.md', import.meta.url);
export const HUMAN_OUTPUT_SKILL_URL = new URL('../skills/agent-libos-human-output/SKILL.md', import.meta.url);
