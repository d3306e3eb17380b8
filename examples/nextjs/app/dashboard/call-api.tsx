'use client';
import { useActionState } from 'react';
import { callUserinfo } from './actions';

export function CallApi() {
  const [result, run, pending] = useActionState(callUserinfo, '');
  return (
    <form action={run}>
      <button type="submit" disabled={pending}>
        Call userinfo with the access token
      </button>
      {result && (
        <section aria-label="API answer">
          <pre>{result}</pre>
        </section>
      )}
    </form>
  );
}
