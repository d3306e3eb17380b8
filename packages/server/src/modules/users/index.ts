export { emailKey, isValidEmail } from './email.js';
export { codePointLength, createPasswordHasher, type PasswordHasher } from './password.js';
export { type SignInDeps, type SignInPolicy, verifyCredentials } from './sign-in.service.js';
export {
  applyUserUpdate,
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
} from './users.admin.js';
export { Metadata, NAME_MAX_LENGTH, SignUpBody, SignUpResponse } from './users.schemas.js';
export {
  checkPassword,
  checkSignUp,
  createUserWithoutPassword,
  insertNewUser,
  preparePasswordUser,
  type SignUpInput,
  type SignUpResult,
  signUp,
  type UsersDeps,
} from './users.service.js';
