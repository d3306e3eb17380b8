import type { FastifyInstance } from 'fastify';
import { PAGE } from '../hosted/responses.js';

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
var pv=document.getElementById('preview');
if(pv){
  var name=document.getElementById('f-name'),logo=document.getElementById('f-logoUrl'),color=document.getElementById('f-primaryColor');
  var luminance=function(hex){var c=[1,3,5].map(function(i){var v=parseInt(hex.slice(i,i+2),16)/255;return v<=0.04045?v/12.92:Math.pow((v+0.055)/1.055,2.4);});return 0.2126*c[0]+0.7152*c[1]+0.0722*c[2];};
  var update=function(){
    pv.querySelectorAll('[data-pv=name]').forEach(function(n){n.textContent=name.value;});
    var ok=/^https:\\/\\/\\S+$/.test(logo.value);
    pv.querySelectorAll('img[data-pv=logo]').forEach(function(i){if(ok){i.src=logo.value;i.hidden=false;}else{i.hidden=true;i.removeAttribute('src');}});
    if(/^#[0-9a-fA-F]{6}$/.test(color.value)){
      var l=luminance(color.value),fg=(l+0.05)/0.05>=1.05/(l+0.05)?'#000000':'#ffffff';
      pv.querySelectorAll('.pv-primary').forEach(function(b){b.style.setProperty('background',color.value);b.style.setProperty('color',fg);});
    }
  };
  [name,logo,color].forEach(function(i){i.addEventListener('input',update);});
  update();
}
})();`;

export function adminAssets(scope: FastifyInstance) {
  scope.get('/admin/assets/admin.js', PAGE, async (_request, reply) =>
    reply
      .header('content-type', 'text/javascript; charset=utf-8')
      .header('cache-control', 'no-cache')
      .header('x-content-type-options', 'nosniff')
      .send(SCRIPT),
  );
}
