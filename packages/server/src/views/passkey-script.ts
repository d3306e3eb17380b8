import { sha256Base64url } from '../crypto/hash.js';

/**
 * The hosted pages' one script: the passkey ceremony (docs/design.md §13), which needs the
 * browser's WebAuthn API. Everything else on the pages works without it. It reads its
 * endpoints and the CSRF token from the `[data-passkey]` element, shows that element only
 * where the browser has WebAuthn, and where it says `data-autofill` (the sign-in page) also
 * offers passkeys in the e-mail field's autofill (conditional mediation). It prefers the browser's own JSON
 * (de)serialisers (WebAuthn Level 3 `parse*OptionsFromJSON`, `toJSON`) and falls back to
 * a few lines of base64url for older browsers.
 */
export const PASSKEY_SCRIPT = `(function () {
  var P = window.PublicKeyCredential, box = document.querySelector('[data-passkey]');
  if (!P || !box || !navigator.credentials) return;
  var d = box.dataset, button = box.querySelector('button'), alert = box.querySelector('[role=alert]');
  var fallback = document.querySelector('[data-passkey-fallback]');
  if (fallback) fallback.hidden = true;
  box.hidden = false;
  function bytes(s) { return Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/')), function (c) { return c.charCodeAt(0); }); }
  function text(b) { return btoa(String.fromCharCode.apply(null, new Uint8Array(b))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, ''); }
  function ids(list) { return (list || []).map(function (c) { return Object.assign({}, c, { id: bytes(c.id) }); }); }
  function requestOptions(o) {
    return P.parseRequestOptionsFromJSON ? P.parseRequestOptionsFromJSON(o)
      : Object.assign({}, o, { challenge: bytes(o.challenge), allowCredentials: ids(o.allowCredentials) });
  }
  function creationOptions(o) {
    return P.parseCreationOptionsFromJSON ? P.parseCreationOptionsFromJSON(o)
      : Object.assign({}, o, { challenge: bytes(o.challenge), user: Object.assign({}, o.user, { id: bytes(o.user.id) }), excludeCredentials: ids(o.excludeCredentials) });
  }
  function json(c) {
    try { return c.toJSON(); } catch (e) {}
    var r = c.response, out = {};
    ['clientDataJSON', 'authenticatorData', 'signature', 'userHandle', 'attestationObject'].forEach(function (k) { if (r[k]) out[k] = text(r[k]); });
    if (r.getTransports) out.transports = r.getTransports();
    return { id: c.id, rawId: text(c.rawId), type: c.type, response: out, clientExtensionResults: c.getClientExtensionResults(), authenticatorAttachment: c.authenticatorAttachment };
  }
  function post(url, body) {
    return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': d.csrf }, body: JSON.stringify(body || {}) })
      .then(function (r) {
        return r.json().catch(function () { return {}; }).then(function (j) {
          if (!r.ok) throw new Error(j.detail || 'Something went wrong. Reload the page and try again.');
          return j;
        });
      });
  }
  function go(r) { location.assign(r.location); }
  function fail(e) {
    if (e.name === 'AbortError') return;
    button.disabled = false;
    alert.textContent = e.name === 'NotAllowedError' ? 'The passkey request was cancelled or timed out.'
      : e.name === 'InvalidStateError' ? 'This device has a passkey for this account already.' : e.message;
    alert.hidden = false;
  }
  if (d.passkey === 'register') {
    button.onclick = function () {
      alert.hidden = true; button.disabled = true;
      post(d.options).then(function (o) { return navigator.credentials.create({ publicKey: creationOptions(o) }); })
        .then(function (c) { return post(d.verify, json(c)); }).then(go).catch(fail);
    };
    return;
  }
  var options, at, pending;
  function fresh() {
    if (options && Date.now() - at < 120000) return Promise.resolve(options);
    return post(d.options).then(function (o) { options = o; at = Date.now(); return o; });
  }
  function signIn(request) {
    return request.then(function (c) { if (!c) return; options = undefined; return post(d.verify, json(c)).then(go); });
  }
  button.onclick = function () {
    if (pending) pending.abort();
    alert.hidden = true; button.disabled = true;
    signIn(fresh().then(function (o) { return navigator.credentials.get({ publicKey: requestOptions(o) }); })).catch(function (e) { options = undefined; fail(e); });
  };
  if (d.autofill && P.isConditionalMediationAvailable) P.isConditionalMediationAvailable().then(function (yes) {
    if (!yes) return;
    pending = new AbortController();
    return signIn(fresh().then(function (o) { return navigator.credentials.get({ mediation: 'conditional', publicKey: requestOptions(o), signal: pending.signal }); }));
  }).catch(fail);
})();
`;

/** Where the pages load it from: its digest in the address, so that it can be cached for good. */
export const PASSKEY_SCRIPT_PATH = `/passkeys.js?v=${sha256Base64url(PASSKEY_SCRIPT).slice(0, 16)}`;
