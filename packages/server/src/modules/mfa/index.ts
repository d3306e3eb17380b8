export {
  claimChallengeIn,
  createChallenge,
  type Finish,
  invalidMfaToken,
  pendingChallenge,
  redeemChallenge,
} from './challenges.js';
export type { MfaDeps } from './deps.js';
export {
  confirmTotp,
  enrolTotp,
  newRecoveryCodes,
  resetFactor,
} from './enrolment.service.js';
export {
  deleteFactor,
  type Factor,
  type FactorType,
  listFactors,
  type SecondStep,
  secondStepFor,
} from './factors.js';
export {
  listPasskeys,
  type Passkey,
  passkeyRegistrationOptions,
  passkeySignInOptions,
  type RelyingParty,
  registerPasskey,
  relyingPartyOf,
  renamePasskey,
  verifyPasskeySignIn,
} from './passkeys.js';
export { replaceRecoveryCodes } from './recovery-codes.js';
export {
  claimTotpStep,
  matchTotp,
  resumeTotp,
  sealedTotpSecrets,
  startTotp,
  type TotpEnrolment,
} from './totp.js';
