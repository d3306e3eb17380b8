import { LatchkeyProvider } from '@latchkey/react';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.jsx';
import './style.css';

createRoot(document.getElementById('root')).render(
  <StrictMode>
    <LatchkeyProvider
      publishableKey={import.meta.env.VITE_LATCHKEY_PUBLISHABLE_KEY}
      authUrl={import.meta.env.VITE_LATCHKEY_URL}
      afterSignOutUrl="/"
    >
      <App />
    </LatchkeyProvider>
  </StrictMode>,
);
