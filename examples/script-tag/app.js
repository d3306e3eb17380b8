// The publishable key comes from ?pk= once, then from this browser's storage.
const given = new URLSearchParams(location.search).get('pk');
if (given) localStorage.setItem('example:pk', given);
const publishableKey = given || localStorage.getItem('example:pk');

if (!publishableKey) {
  document.getElementById('need-key').hidden = false;
} else {
  const latchkey = Latchkey({ publishableKey });
  let unmount = null;

  const render = () => {
    const user = latchkey.getUser();
    document.getElementById('signed-in').hidden = !user;
    document.getElementById('email').textContent = user ? user.email : '';
    if (user && unmount) {
      unmount();
      unmount = null;
    }
    if (!user && !unmount) {
      unmount = latchkey.mount('#sign-in', { redirectUrl: `${location.origin}/callback.html` });
    }
  };

  document.getElementById('sign-out').addEventListener('click', () => {
    latchkey.signOut().catch((error) => {
      document.getElementById('problem').textContent = error.message;
    });
  });
  // Sign-in, refresh and sign-out, from this tab or any other.
  latchkey.addListener(render);
  render();
}
