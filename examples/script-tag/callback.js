const latchkey = Latchkey({ publishableKey: localStorage.getItem('example:pk') });
latchkey.handleRedirectCallback().then(
  () => location.replace('/'),
  (error) => {
    document.querySelector('h1').textContent = 'Sign-in did not work';
    document.getElementById('problem').textContent = error.message;
  },
);
