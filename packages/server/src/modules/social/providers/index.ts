import { apple } from './apple.js';
import { facebook } from './facebook.js';
import { github } from './github.js';
import { google } from './google.js';
import { microsoft } from './microsoft.js';
import type { ProviderDefinition } from './types.js';

/** Every provider, in the order pages list them. A new provider is one file and one line here. */
const registry = { google, facebook, github, apple, microsoft };

export type ProviderId = keyof typeof registry;

/** Each key names its own definition (a mismatch is a type error). */
export const PROVIDERS: { readonly [Id in ProviderId]: ProviderDefinition<Id> } =
  Object.freeze(registry);

export const PROVIDER_IDS = Object.freeze(Object.keys(PROVIDERS) as ProviderId[]);

export type {
  Endpoints,
  ExtraSetting,
  Profile,
  ProviderCredentials,
  ProviderDefinition,
} from './types.js';
