// Resolved from a file directly under src/ so the relative path is the same from src/ (tests) and dist/ (built).
export const FILESYSTEM_SKILL_URL = new URL('../skills/agent-libos-filesystem/SKILL.md', import.meta.url);
export const SHELL_SKILL_URL = new URL('../skills/agent-libos-shell/SKILL.md', import.meta.url);
export const GIT_SKILL_URL = new URL('../skills/agent-libos-git/SKILL.md', import.meta.url);
