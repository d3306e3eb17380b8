export { createMailer, type Mail, type Mailer, type MailerOptions, readOutbox } from './mailer.js';
export { accountExistsMail, addressMail, type LinkPurpose, linkMail } from './templates.js';
