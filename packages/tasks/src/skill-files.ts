// Resolved from a file directly under src/ so the relative path is the same from src/ (tests) and dist/ (built).
export const OBJECT_TASKS_SKILL_URL = new URL('../skills/agent-libos-object-tasks/SKILL.md', import.meta.url);
