const latchkey = Latchkey({ publishableKey: localStorage.getItem('example:pk') });
latchkey.handleRedirectCallback().then(
  // Back to the page where the sign-in started (this origin only); '/' if none.
  (session) => location.replace(session ? session.returnTo : '/'),
  (error) => {
    document.querySelector('h1').textContent = 'Sign-in did not work';
    document.getElementById('problem').textContent = error.message;
  },
);
