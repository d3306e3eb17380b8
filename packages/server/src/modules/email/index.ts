export { createMailer, type Mail, type Mailer, type MailerOptions, readOutbox } from './mailer.js';
export { type LinkPurpose, linkMail } from './templates.js';
