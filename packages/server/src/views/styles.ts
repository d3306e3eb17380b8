import { type Html, trusted } from './html.js';

/**
 * The one style sheet of the server's pages, inlined under the page's CSP nonce: the rules
 * both areas share, then each area's own layout. The hosted pages take the tenant's brand
 * colour (and black or white text on it, whichever reads better).
 */
const SHARED = `*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328}
a{color:#0550ae}
.hint{font-size:.875rem;color:#57606a;margin:.25rem 0 0}
.alert{border-radius:8px;padding:.75rem 1rem;margin:0 0 1rem}
.error{background:#ffebe9;color:#82071e;border:1px solid #ff8182}
.notice{background:#ddf4ff;color:#0a3069;border:1px solid #54aeff}
.alert ul{margin:.25rem 0 0;padding-left:1.25rem}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}`;

/** The hosted pages: one centred card, full width on a phone. */
const HOSTED = `body{background:#f3f4f6}
main{max-width:26rem;margin:2.5rem auto;padding:2rem 1.5rem;background:#fff;border-radius:12px;box-shadow:0 1px 4px rgba(0,0,0,.14);overflow-wrap:anywhere}
@media (max-width:30rem){main{margin:0;border-radius:0;min-height:100vh;box-shadow:none}}
.logo{display:block;max-height:3rem;max-width:12rem;margin:0 auto .5rem;color:#57606a;font-size:.95rem;text-align:center}
.tenant{text-align:center;color:#57606a;margin:0 0 .25rem;font-size:.95rem}
h1{font-size:1.5rem;line-height:1.25;margin:0 0 1.25rem;text-align:center}
label{display:block;font-weight:600;margin:1rem 0 .3rem}
input{width:100%;padding:.65rem .75rem;font:inherit;color:inherit;border:1px solid #6e7781;border-radius:8px;background:#fff}
input:focus{outline:3px solid var(--brand);outline-offset:1px}
button{display:block;width:100%;margin-top:1.5rem;padding:.75rem;font:inherit;font-weight:600;border:0;border-radius:8px;background:var(--brand);color:var(--on-brand);cursor:pointer}
button:focus-visible,a:focus-visible{outline:3px solid #1f2328;outline-offset:2px}
.provider{display:flex;align-items:center;justify-content:center;gap:.6rem;text-align:center;text-decoration:none;padding:.7rem;border-radius:8px;font-weight:600;background:#fff;color:#1f2328;border:1px solid #6e7781;margin-top:.75rem}
.provider svg,button svg{flex:none;width:20px;height:20px}
button:has(svg){display:flex;align-items:center;justify-content:center;gap:.6rem}
.tag{padding:0 .4rem;border-radius:1rem;background:#fff8c5;border:1px solid #d4a72c;color:#4d2d00;font-size:.75rem;font-weight:600}
.dev{background:#fff8c5;color:#4d2d00;border:1px solid #d4a72c}
.steps{padding-left:1.25rem;margin:0 0 1rem}.steps li{margin:.5rem 0}
.qr svg{display:block;width:12rem;height:12rem;margin:.75rem auto}
.secret code,.codes code{font-family:ui-monospace,monospace;font-size:1rem;letter-spacing:.05em;overflow-wrap:anywhere}
.codes{display:grid;grid-template-rows:repeat(5,auto);grid-auto-flow:column;justify-content:start;column-gap:2.5rem;padding-left:1.75rem;margin:0 0 1rem}.codes li{margin:.2rem 0}
.codes code{font-size:.9rem;letter-spacing:0;white-space:nowrap}
label.check{display:flex;gap:.5rem;align-items:center;font-weight:400}
label.check input{width:auto;margin:0}
nav{margin-top:1.5rem;text-align:center;font-size:.95rem;display:flex;flex-direction:column;gap:.5rem}
.or{text-align:center;color:#57606a;margin:1.25rem 0 0}
.fix{font-size:.95rem}
.fix code{font-family:ui-monospace,monospace;font-size:.85rem;overflow-wrap:anywhere;background:#f6f8fa;border:1px solid #d0d7de;border-radius:4px;padding:.05rem .25rem}
.fix .command{display:block;padding:.5rem .6rem;border-radius:6px}
[hidden]{display:none!important}
button.secondary{background:#fff;color:#1f2328;border:1px solid #6e7781}
.passkey{margin-top:1rem}.passkey .alert{margin:0}
.account h2{font-size:1.15rem;margin:1.75rem 0 .5rem}
.account section{border-top:1px solid #d0d7de;margin-top:1.5rem}
.factors{list-style:none;margin:0;padding:0}
.factors li{border:1px solid #d0d7de;border-radius:8px;padding:.75rem;margin:.75rem 0}
.factors .name{font-weight:600;margin:0;overflow-wrap:anywhere}
.factors label{margin:.5rem 0 .25rem}
.factors .hint{margin:0}
.row{display:flex;gap:.5rem;align-items:center}
.row button,.factors button{width:auto;margin:.5rem 0 0;padding:.55rem 1rem}
.row input{flex:1;min-width:0}.row button{margin:0}
button.danger{background:#fff;color:#a40e26;border:1px solid #a40e26}`;

/** The admin area: a top bar, wide tables and cards; tables become lists on a phone. */
const ADMIN = `body{background:#f6f8fa}
header.top{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.25rem;padding:.6rem 1rem;background:#1f2328;color:#fff}
header.top a{color:#fff}
.brand{font-weight:700;text-decoration:none}
nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem .9rem}
header.top .who{margin-left:auto;display:flex;align-items:center;gap:.75rem;font-size:.9rem}
header.top button{margin:0;padding:.3rem .7rem;background:#fff;color:#1f2328;white-space:nowrap}
header.top .who span{overflow-wrap:anywhere}
main{max-width:62rem;margin:0 auto;padding:1rem}
main.narrow{max-width:26rem;margin:2.5rem auto;background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:1.5rem}
h1{font-size:1.6rem;margin:.5rem 0 1rem}
h2{font-size:1.2rem;margin:1.75rem 0 .5rem}
.crumb{margin:.25rem 0;color:#57606a}
nav.sub{border-bottom:1px solid #d0d7de;margin-bottom:1rem;padding-bottom:.5rem}
[aria-current=page]{font-weight:700;text-decoration:none}
header.top [aria-current=page]{text-decoration:underline}
.card{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:1rem;margin:0 0 1rem}
label{display:block;font-weight:600;margin:.8rem 0 .25rem}
label.inline{display:flex;gap:.5rem;align-items:center;font-weight:600}
input,select,textarea{width:100%;max-width:36rem;padding:.5rem .6rem;font:inherit;color:inherit;border:1px solid #6e7781;border-radius:6px;background:#fff}
input[type=checkbox],input[type=radio]{width:auto}
fieldset.modes{border:0;padding:0;margin:.8rem 0 0}
fieldset.modes legend{font-weight:600;padding:0}
fieldset.modes label.inline{font-weight:400;margin:.5rem 0 0}
fieldset.modes .hint{margin:0 0 0 1.5rem}
input[type=color]{width:4rem;height:2.4rem;padding:.1rem}
textarea{min-height:6rem;font-family:ui-monospace,monospace;font-size:.85rem}
button{margin-top:1rem;padding:.5rem 1rem;font:inherit;font-weight:600;border:0;border-radius:6px;background:#0550ae;color:#fff;cursor:pointer}
button.danger{background:#a40e26}
button.plain{background:#eaeef2;color:#1f2328;margin:0}
form.test-sign-in{margin-top:.75rem}
:focus-visible{outline:3px solid #fb8f44;outline-offset:2px}
.row{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.row form{margin:0}
.row button{margin:0}
code,.mono{font-family:ui-monospace,monospace;font-size:.88rem;overflow-wrap:anywhere}
pre{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:.6rem;overflow-x:auto;font-size:.82rem;white-space:pre-wrap;overflow-wrap:anywhere}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid #d0d7de;vertical-align:top}
.secret{font-size:1rem;background:#fff8c5;border:1px solid #d4a72c;padding:.5rem;border-radius:6px}
.badge{display:inline-block;padding:0 .4rem;border-radius:1rem;background:#eaeef2;font-size:.8rem}
.badge.ok{background:#dafbe1;color:#116329}.badge.bad{background:#ffebe9;color:#82071e}
ul.failing{margin:.5rem 0 0;padding:0;list-style:none}ul.failing li{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:.25rem 0}ul.failing form{margin:0}
.alert h2{font-size:1.05rem;margin:0 0 .25rem}
.delivery h3{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.delivery pre{margin:0;max-height:12rem;overflow:auto}.delivery details{margin:.75rem 0}
fieldset.events label.inline{font-weight:400;margin:.35rem 0 0}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(17rem,1fr));gap:1rem}
.preview{margin:0;border:1px dashed #6e7781;border-radius:8px;padding:.75rem;background:#f6f8fa}
.preview figcaption{font-weight:600;margin:0 0 .5rem}
.preview iframe{display:block;width:100%;height:40rem;border:1px solid #d0d7de;border-radius:6px;background:#f3f4f6}
.preview-grid{grid-template-columns:minmax(0,3fr) minmax(0,2fr);align-items:start}
@media (max-width:56rem){.preview-grid{grid-template-columns:minmax(0,1fr)}}
form.card>button{display:block}
.card>:first-child,.card>input[type=hidden]:first-child+*,.card>input[type=hidden]+input[type=hidden]+*{margin-top:0}
td time,th,code.short{white-space:nowrap}
.scroll+.card{margin-top:1rem}
td form{margin:0}td button{margin:0}
code.kind{white-space:nowrap;overflow-wrap:normal}
nav.pager{display:flex;gap:1.5rem;margin:.75rem 0 1rem;font-weight:600}
.product{margin:0 0 .25rem;font-weight:700;color:#57606a;letter-spacing:.02em}
p.label{font-weight:600;margin:.8rem 0 .25rem}
.limits{margin:0}
fieldset{border:1px solid #d0d7de;border-radius:6px;margin:.8rem 0 0;padding:.25rem .75rem .6rem;max-width:36rem}
.card h3{font-size:1.05rem;margin:0 0 .25rem}
dl.facts{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.35rem 1.25rem}
dl.facts dt{font-weight:600}dl.facts dd{margin:0}
@media (max-width:40rem){main{padding:.6rem}main.narrow{margin:0}header.top .who{margin-left:0}
table,tbody,tr,td{display:block}thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
tr{border-bottom:2px solid #d0d7de;padding:.3rem 0}td{border:0;padding:.15rem .3rem}
td[data-label]::before{content:attr(data-label) ": ";font-weight:600}}`;

/** WCAG 2.x relative luminance of a #rrggbb colour. */
function luminance(hex: string): number {
  const channel = (i: number) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/** Black or white, whichever reads better on the brand colour (WCAG contrast ratio). */
export function textOn(hex: string): '#000000' | '#ffffff' {
  const l = luminance(hex);
  return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? '#000000' : '#ffffff';
}

/** The brand colour of a hosted page whose tenant chose none. */
export const DEFAULT_BRAND = '#4f46e5';

/** The hosted pages' sheet in the tenant's colour (checked as #rrggbb when it was saved). */
export const hostedStyles = (brand: string): Html =>
  trusted(`:root{--brand:${brand};--on-brand:${textOn(brand)}}\n${SHARED}\n${HOSTED}`);

export const ADMIN_STYLES: Html = trusted(`${SHARED}\n${ADMIN}`);
