/**
 * The kit's one stylesheet, served by the gateway (`STYLESHEET_PATH` under a page set's base) with
 * a content hash in its ETag. System fonts, high-contrast colours (text on background ≥ 7:1), a
 * visible focus ring, and tables that scroll rather than overflow on narrow screens.
 */
import { createHash } from "node:crypto";

export const STYLESHEET_PATH = "/assets/ui.css";

export const STYLESHEET = `
:root{--fg:#111;--muted:#444;--bg:#fff;--line:#c8c8c8;--accent:#0b4f9c;--bad:#9b1c1c;--warn:#7a4d00;--ok:#1d5e20;--panel:#f4f5f7}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--accent)}
a:focus,button:focus,input:focus,select:focus,textarea:focus,summary:focus{outline:3px solid #f5a623;outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:#fff;padding:4px 8px;z-index:2}
header.top{display:flex;flex-wrap:wrap;gap:12px 24px;align-items:center;padding:10px 20px;background:#16213a;color:#fff}
header.top a{color:#fff}header.top .brand{font-weight:700;text-decoration:none}
header.top nav ul{display:flex;flex-wrap:wrap;gap:4px 16px;list-style:none;margin:0;padding:0}
header.top nav a[aria-current=page]{text-decoration:underline;text-underline-offset:4px;font-weight:600}
header.top .who{margin-left:auto;display:flex;gap:10px;align-items:center}
header.top form{margin:0}header.top button{background:transparent;color:#fff;border:1px solid #fff}
main{padding:16px 20px;max-width:1200px}
h1{font-size:1.5rem;margin:.2em 0 .6em}h2{font-size:1.15rem;margin:1.4em 0 .5em}
.panel{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:12px 16px;margin:0 0 16px}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(340px,1fr));gap:16px}
.table-wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:14px}
th,td{border-bottom:1px solid var(--line);padding:6px 8px;text-align:left;vertical-align:top}
th{background:#e9ebef}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;margin:0}dl.facts dt{font-weight:600}dl.facts dd{margin:0;word-break:break-all}
.flash{padding:10px 14px;border-radius:6px;margin:0 0 16px;border:1px solid}
.flash.ok{background:#e8f5e9;border-color:var(--ok);color:var(--ok)}.flash.error{background:#fdecea;border-color:var(--bad);color:var(--bad)}
.flash.warn{background:#fff4e0;border-color:var(--warn);color:var(--warn)}
.badge{display:inline-block;padding:0 6px;border-radius:4px;font-size:13px;border:1px solid currentColor}
.badge.ok{color:var(--ok)}.badge.bad{color:var(--bad)}.badge.warn{color:var(--warn)}.badge.muted{color:var(--muted)}
form.stack{display:grid;gap:10px;max-width:480px}
label{font-weight:600;display:block}
input,select,textarea{font:inherit;padding:6px 8px;border:1px solid #767676;border-radius:4px;width:100%}
input[type=radio],input[type=checkbox]{width:auto}
.inline-label{display:inline;font-weight:400}
fieldset{border:1px solid var(--line);border-radius:6px}fieldset label{display:inline;font-weight:400}
button,.button{font:inherit;padding:6px 14px;border-radius:4px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer;text-decoration:none;display:inline-block}
button.secondary{background:#fff;color:var(--accent)}button.danger{background:var(--bad);border-color:var(--bad)}
form.inline{display:flex;gap:8px;align-items:end;flex-wrap:wrap}form.inline input{width:auto;min-width:18em}
.muted{color:var(--muted)}
svg.chart{max-width:100%;height:auto;background:#fff;border:1px solid var(--line)}
svg.chart .bar{fill:var(--accent)}svg.chart .err{fill:var(--bad)}svg.chart text{font-size:10px;fill:var(--muted)}
`;

export const STYLESHEET_ETAG = `"${createHash("sha256").update(STYLESHEET).digest("base64url").slice(0, 16)}"`;
