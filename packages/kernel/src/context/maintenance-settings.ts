import type { ContextManagement, ContextManagementMode, ImageDefinition } from '@libos/sdk';

/**
 * An image's context maintenance settings (`ImageDefinition.contextManagement`) with their defaults, and the checks
 * the plugin loader runs on them. Apart from the maintenance itself so the loader does not import the call path.
 */

export const DEFAULT_THRESHOLD_RATIO = 0.8;
export const DEFAULT_MAINTENANCE_TOOL = 'compact_process_context';
export const DEFAULT_PRESSURE_NOTICE = "Context pressure notice: your prompt is close to the model's context window.";

/** An image's context maintenance with every default filled in. */
export interface MaintenanceSettings {
  readonly mode: ContextManagementMode;
  readonly thresholdRatio: number;
  readonly tool: { readonly name: string; readonly arguments: Readonly<Record<string, unknown>> };
  readonly prompt: string;
}

export function maintenanceSettings(image: ImageDefinition | undefined): MaintenanceSettings {
  const cm: ContextManagement = image?.contextManagement ?? {};
  return {
    mode: cm.mode ?? 'auto_compact',
    thresholdRatio: cm.thresholdRatio ?? DEFAULT_THRESHOLD_RATIO,
    tool: { name: cm.tool?.name ?? DEFAULT_MAINTENANCE_TOOL, arguments: cm.tool?.arguments ?? {} },
    prompt: cm.prompt ?? DEFAULT_PRESSURE_NOTICE,
  };
}

/** What is wrong with an image's `contextManagement` (empty: nothing), for the plugin loader. */
export function contextManagementProblems(image: ImageDefinition): string[] {
  const cm = image.contextManagement;
  if (!cm) return [];
  const out: string[] = [];
  if (cm.mode !== undefined && !['auto_compact', 'prompt', 'disabled'].includes(cm.mode))
    out.push(`mode must be auto_compact, prompt or disabled (got ${JSON.stringify(cm.mode)})`);
  if (cm.thresholdRatio !== undefined && !(Number.isFinite(cm.thresholdRatio) && cm.thresholdRatio > 0 && cm.thresholdRatio <= 1)) {
    out.push(`thresholdRatio must be in (0, 1] (got ${cm.thresholdRatio})`);
  }
  if (cm.mode === 'prompt' && image.promptMode === 'image_only')
    out.push('mode prompt is not allowed for an image_only image (its prompt is its context Object alone)');
  return out;
}
