// Resolved from a file directly under src/ so the relative path is the same from src/ (tests) and dist/ (built).
export const CHECKPOINTS_SKILL_URL = new URL('../skills/agent-libos-checkpoints/SKILL.md', import.meta.url);
export const OBJECT_FILES_SKILL_URL = new URL('../skills/agent-libos-object-files/SKILL.md', import.meta.url);
