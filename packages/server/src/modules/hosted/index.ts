export {
  type AccountHolder,
  accountFactors,
  changeAccountPassword,
  confirmAccountApp,
  removeAccountFactor,
  replaceAccountRecoveryCodes,
  startAccountApp,
} from './account-factors.service.js';
export {
  type BrowserMeta,
  type BrowserOutcome,
  type BrowserSignIn,
  type BrowserSignUp,
  redeemCode,
  signInBrowser,
  signInWithPassword,
  signInWithProvider,
  signUpInBrowser,
  type Unverified,
} from './browser-sign-in.service.js';
export { type HostedDeps, withinLimit } from './deps.js';
export {
  completePasswordReset,
  confirmAddress,
  type LinkOutcome,
  mailAddressConfirmation,
  openEmailLink,
  requestPasswordReset,
  sendAccountLink,
  verifyEmail,
} from './email-links.service.js';
export {
  checkHostedRequest,
  type HostedRequest,
  hostedQuery,
  Refusal,
  startedOnCallerPage,
} from './hosted-request.js';
export {
  confirmSetupInBrowser,
  pendingSecondStep,
  returningUserOf,
  startSetupInBrowser,
  verifyInBrowser,
  verifyPasskeyInBrowser,
} from './second-factor.service.js';
