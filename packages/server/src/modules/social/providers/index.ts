import { apple } from './apple.js';
import { facebook } from './facebook.js';
import { github } from './github.js';
import { google } from './google.js';
import { microsoft } from './microsoft.js';
import type { ProviderDefinition, ProviderId } from './types.js';

export const PROVIDERS: Readonly<Record<ProviderId, ProviderDefinition>> = Object.freeze({
  google,
  facebook,
  github,
  apple,
  microsoft,
});

export {
  type Endpoints,
  PROVIDER_IDS,
  type Profile,
  type ProviderDefinition,
  type ProviderId,
} from './types.js';
