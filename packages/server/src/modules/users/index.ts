export { isValidEmail } from './email.js';
export { createPasswordHasher, type PasswordHasher } from './password.js';
export { type SignInDeps, type SignInPolicy, verifyCredentials } from './sign-in.service.js';
export {
  deleteUser,
  findUserByEmail,
  getUser,
  type ListUsersInput,
  listUsers,
  markEmailVerified,
  setPasswordHash,
  type UpdateUserInput,
  type User,
  updateUser,
  userHasPassword,
} from './users.admin.js';
export { SignUpBody, SignUpResponse } from './users.schemas.js';
export {
  checkPassword,
  createUser,
  createUserWithoutPassword,
  type SignUpInput,
  type SignUpResult,
  signUp,
  type UsersDeps,
} from './users.service.js';
