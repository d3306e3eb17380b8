export {
  listPasskeys,
  type Passkey,
  passkeyRegistrationOptions,
  passkeySignInOptions,
  type RelyingParty,
  registerPasskey,
  relyingPartyOf,
  removePasskey,
  renamePasskey,
  verifyPasskeySignIn,
} from './passkeys.js';
