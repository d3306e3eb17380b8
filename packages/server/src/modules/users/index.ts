export { emailKey, isValidEmail } from './email.js';
export { codePointLength, createPasswordHasher, type PasswordHasher } from './password.js';
export { SignUpBody, SignUpResponse } from './users.schemas.js';
export {
  checkSignUp,
  type SignUpInput,
  type SignUpResult,
  signUp,
  type UsersDeps,
} from './users.service.js';
