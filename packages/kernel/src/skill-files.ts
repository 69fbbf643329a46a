// Resolved from a file directly under src/ so the relative path is the same from src/ (tests) and dist/ (built).
/** The kernel's own SKILL.md files. */
export const NAVIGATION_SKILL_URL = new URL('../skills/agent-libos-skill-navigation/SKILL.md', import.meta.url);
export const CHILD_PROCESSES_SKILL_URL = new URL('../skills/agent-libos-child-processes/SKILL.md', import.meta.url);
export const AGENT_IMAGES_SKILL_URL = new URL('../skills/agent-libos-agent-images/SKILL.md', import.meta.url);
