export { createMailer, type Mail, type Mailer, type MailerOptions, readOutbox } from './mailer.js';
