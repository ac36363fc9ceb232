// Types for needle-web/environments: upstream's six tool environments, the default model's domain,
// and `browser`, the browser actions the extension executes (the default model was not trained on
// it: it refuses them; a model that generalises to unseen tools, such as needle3, is needed).
import type { Tool } from './index.js';

export type EnvironmentName =
  | 'smart_home'
  | 'media_player'
  | 'kitchen_appliance'
  | 'productivity'
  | 'wearable'
  | 'data_capture'
  | 'browser';

export interface Environment {
  /** The environment's system prompt (pass it as `system`). */
  system: string;
  /** Its tools, flat style: `{ name, description, parameters }`. */
  tools: Tool[];
}

export const environments: Record<EnvironmentName, Environment>;
