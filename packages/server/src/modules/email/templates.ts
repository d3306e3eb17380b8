import { defaults } from '../../config/defaults.js';

export type LinkPurpose = 'verify' | 'reset' | 'address';

const HOUR_MS = 60 * 60_000;
const lifetime = (ms: number) =>
  ms === HOUR_MS
    ? 'one hour'
    : ms % HOUR_MS === 0
      ? `${ms / HOUR_MS} hours`
      : `${ms / 60_000} minutes`;

/** The text of the one-time link mails; the link's lifetime comes from defaults.ts. */
export function linkMail(
  purpose: Exclude<LinkPurpose, 'address'>,
  appName: string,
  link: string,
): { subject: string; text: string } {
  const valid = `The link works once, for ${lifetime(defaults.hosted.linkLifetimeMs[purpose])}.`;
  return purpose === 'verify'
    ? {
        subject: `Verify your e-mail for ${appName}`,
        text: `Verify your e-mail address for ${appName}:\n\n${link}\n\n${valid}`,
      }
    : {
        subject: `Reset your ${appName} password`,
        text: `Someone asked to reset the password of your ${appName} account. To choose a new one:\n\n${link}\n\n${valid} If it was not you, ignore this mail.`,
      };
}

/**
 * To the owner of an address someone tried to sign up with again: the sign-up page says
 * the same as for a new address (no account enumeration), and the owner learns here.
 */
export function accountExistsMail(
  appName: string,
  signInUrl: string,
  resetLink: string,
): { subject: string; text: string } {
  const valid = `That link works once, for ${lifetime(defaults.hosted.linkLifetimeMs.reset)}.`;
  return {
    subject: `You already have a ${appName} account`,
    text: `Someone tried to create a ${appName} account with this e-mail address, which has one already. If it was you, sign in:\n\n${signInUrl}\n\nForgot your password? Choose a new one:\n\n${resetLink}\n\n${valid} If it was not you, ignore this mail; your account is unchanged.`,
  };
}

/**
 * To the owner of an account that many sign-ins fail on from elsewhere, when the right
 * password came from an address it was never signed in from: that address waits for them.
 */
export function addressMail(
  appName: string,
  address: string,
  link: string,
): { subject: string; text: string } {
  const valid = `The link works once, for ${lifetime(defaults.hosted.linkLifetimeMs.address)}.`;
  return {
    subject: `Confirm a sign-in to ${appName}`,
    text: `Many sign-ins to your ${appName} account have failed from other places, so a sign-in from a new one needs you to confirm it. Your password was just used from ${address}. If that was you, let it in, then sign in again:\n\n${link}\n\n${valid} If it was not you, do not open the link: someone knows your password. Choose a new one ("Forgot your password?" on the sign-in page).`,
  };
}
