import type { AnyTool, ImageDefinition, OwnershipResolver, Plugin, ServiceFactory, SkillManifest } from '@libos/sdk';
import type { MigrationSet } from '../store/migrate.js';

export interface RegisteredTool {
  readonly tool: AnyTool;
  readonly plugin: string;
  /** The one Skill whose allowed-tools names this tool. */
  readonly skill: string;
}

export interface RegisteredSkill {
  readonly manifest: SkillManifest;
  readonly plugin: string;
}

/** Everything the loaded plugins contribute, validated. */
export interface Registry {
  readonly plugins: readonly Plugin[];
  readonly tools: ReadonlyMap<string, RegisteredTool>;
  readonly skills: ReadonlyMap<string, RegisteredSkill>;
  readonly images: ReadonlyMap<string, ImageDefinition>;
  readonly services: ReadonlyMap<string, ServiceFactory>;
  readonly migrations: readonly MigrationSet[];
  /** Ownership resolvers by resource kind (the authority engine derives owners' rights through them). */
  readonly owners: ReadonlyMap<string, OwnershipResolver>;
}
