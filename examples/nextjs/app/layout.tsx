import { currentUser } from '@latchkey/nextjs';
import { LatchkeyProvider, SignedIn, SignedOut, UserButton } from '@latchkey/nextjs/client';
import type { Metadata } from 'next';
import type { ReactNode } from 'react';
import './styles.css';

export const metadata: Metadata = { title: 'Latchkey + Next.js' };

export default async function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <LatchkeyProvider user={await currentUser()}>
          <header>
            <a href="/">Latchkey + Next.js</a>
            <nav>
              <SignedIn>
                <a href="/dashboard">Dashboard</a>
                <UserButton />
              </SignedIn>
              <SignedOut>
                <a href="/api/latchkey/sign-in?returnTo=/dashboard">Sign in</a>
              </SignedOut>
            </nav>
          </header>
          <main>{children}</main>
        </LatchkeyProvider>
      </body>
    </html>
  );
}
