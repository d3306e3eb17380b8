export { type BreachedPasswords, createBreachedPasswords } from './breached-passwords.js';
export {
  allowAddress,
  type SignInDeps,
  type SignInPolicy,
  upgradePasswordIn,
  verifyCredentials,
} from './credentials.service.js';
export { emailKey, isValidEmail } from './email.js';
export { createPasswordHasher, type PasswordHasher } from './password.js';
export { checkMetadata, checkName } from './profile-rules.js';
export {
  checkPassword,
  createUserWithoutPassword,
  insertNewUser,
  preparePasswordUser,
  type SignUpInput,
  type SignUpResult,
  signUp,
  type UsersDeps,
} from './sign-up.service.js';
export { Metadata, NAME_MAX_LENGTH, SignUpBody, SignUpResponse } from './users.schemas.js';
export {
  applyUserUpdate,
  type BrowserProfile,
  browserProfile,
  deleteUser,
  findUserByEmail,
  getUser,
  type ListUsersInput,
  listUsers,
  markEmailVerified,
  setPasswordHash,
  toUser,
  type UpdateUserInput,
  type User,
  userHasPassword,
} from './users.service.js';
