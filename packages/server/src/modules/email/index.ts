export { createMailer, type Mail, type Mailer, type MailerOptions, readOutbox } from './mailer.js';
export { accountExistsMail, type LinkPurpose, linkMail } from './templates.js';
