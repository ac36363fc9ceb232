// Types for needle-web/environments: upstream's six tool environments and `browser`, the browser
// actions the extension executes: the seven the default model was trained on.
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
