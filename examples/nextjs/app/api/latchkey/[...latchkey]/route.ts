// Sign-in, callback (the redirect URI registered with Latchkey) and sign-out.
import { handlers } from '@latchkey/nextjs';

export const { GET, POST } = handlers;
