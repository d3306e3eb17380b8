export {
  DEVELOPMENT_ISSUER,
  type DevelopmentAnswer,
  developmentProfile,
  developmentSubject,
  pendingDevelopmentFlow,
} from './development.js';
export {
  authorizationOrigin,
  callbackUrl,
  claimFlow,
  type FlowDeps,
  findTestResult,
  finishFlow,
  saveTestResult,
  startFlow,
} from './flow.service.js';
export { type ListedIdentity, listIdentities } from './identities.js';
export {
  dropUnprovenIdentities,
  type Identity,
  type LinkDeps,
  linkIdentity,
  retryingRace,
  SocialRefusal,
  unlinkIdentity,
  userForProfileIn,
} from './link.service.js';
export { type ProfileOutcome, previewProfile } from './preview.js';
export {
  type Endpoints,
  PROVIDER_IDS,
  PROVIDERS,
  type Profile,
  type ProviderDefinition,
  type ProviderId,
} from './providers/index.js';
export {
  enabledProviders,
  inDevelopmentMode,
  isProviderId,
  listProviderSettings,
  PROVIDER_MODES,
  type ProviderMode,
  type ProviderSettingsInput,
  type ProviderSettingsView,
  providerCredentials,
  sealedProviderSecrets,
  setProvider,
} from './settings.service.js';
