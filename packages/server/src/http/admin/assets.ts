import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { LatchkeyError } from '../../errors/index.js';
import { PAGE } from '../pages/scope.js';

/**
 * The admin area's only script (ES2017, no dependencies): copy buttons, confirmations of
 * destructive actions, and the live Branding preview. Every page works without it.
 */
const SCRIPT = `(function(){
'use strict';
document.addEventListener('click',function(ev){
  var t=ev.target.closest&&ev.target.closest('[data-copy]');
  if(!t)return;
  var el=document.getElementById(t.getAttribute('data-copy'));
  if(!el||!navigator.clipboard)return;
  navigator.clipboard.writeText(el.textContent).then(function(){
    var old=t.firstChild.nodeValue;t.firstChild.nodeValue='Copied';
    setTimeout(function(){t.firstChild.nodeValue=old;},1500);
  });
});
document.addEventListener('submit',function(ev){
  var q=ev.target.getAttribute('data-confirm');
  if(q&&!window.confirm(q))ev.preventDefault();
});
var form=document.getElementById('branding');
if(form){
  var name=document.getElementById('f-name'),logo=document.getElementById('f-logoUrl'),color=document.getElementById('f-primaryColor');
  var frame=document.getElementById('hosted-preview'),buttons=document.getElementById('buttons-preview');
  var base=JSON.parse(buttons.getAttribute('data-config')),unmount=null,timer=0;
  // The rule of a save: https, and on a development tenant http://localhost or 127.0.0.1 too.
  var logoAllowed=function(u){return u.indexOf('https://')===0||(base.environment==='development'&&/^http:\\/\\/(localhost|127\\.0\\.0\\.1)([:\\/]|$)/.test(u));};
  var values=function(){return{name:name.value,logoUrl:logo.value.trim(),primaryColor:color.value};};
  // The real buttons of latchkey.js, drawn by /admin/assets/latchkey-preview.js.
  var drawButtons=function(){
    if(!window.LatchkeyPreview)return;
    var v=values(),config=JSON.parse(JSON.stringify(base));
    config.name=v.name.trim()||base.name;
    config.branding={logoUrl:logoAllowed(v.logoUrl)?v.logoUrl:null,primaryColor:/^#[0-9a-fA-F]{6}$/.test(v.primaryColor)?v.primaryColor:null};
    if(unmount)unmount();else buttons.textContent='';
    unmount=window.LatchkeyPreview(buttons,config);
  };
  // The hosted page, rendered by the server from the unsaved values (replace: no history entry).
  var drawHosted=function(){
    var url=frame.getAttribute('data-src')+'?'+new URLSearchParams(values()).toString();
    try{frame.contentWindow.location.replace(url);}catch(e){frame.src=url;}
  };
  form.addEventListener('input',function(){
    drawButtons();
    clearTimeout(timer);timer=setTimeout(drawHosted,300);
  });
  drawButtons();
}
})();`;

/** @latchkey/js's dist/preview.js: the script tag's buttons, for the Branding preview. */
function loadPreviewScript(): Buffer | undefined {
  try {
    return readFileSync(createRequire(import.meta.url).resolve('@latchkey/js/preview.js'));
  } catch {
    return undefined;
  }
}

const sendScript = (reply: FastifyReply, script: string | Buffer) =>
  reply
    .header('content-type', 'text/javascript; charset=utf-8')
    .header('cache-control', 'no-cache')
    .header('x-content-type-options', 'nosniff')
    .send(script);

export function adminAssets(scope: FastifyInstance, preview = loadPreviewScript()) {
  scope.get('/admin/assets/admin.js', PAGE, async (_request, reply) => sendScript(reply, SCRIPT));
  // Signed-in admins only: it is of no use anywhere else.
  scope.get('/admin/assets/latchkey-preview.js', PAGE, async (_request, reply) => {
    if (!preview)
      throw new LatchkeyError(
        'service_unavailable',
        'The browser library is not built; run npm run build and restart',
      );
    return sendScript(reply, preview);
  });
}
