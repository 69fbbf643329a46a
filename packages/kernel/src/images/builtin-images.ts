// The kernel's images live in @libos/sdk (so a plugin can start from them without the kernel); re-exported here.
export { BASE_AGENT, BUILTIN_IMAGES, CODING_AGENT, SKILL_NAVIGATION, type BuiltinImage, type BuiltinToolGroup } from '@libos/sdk';
