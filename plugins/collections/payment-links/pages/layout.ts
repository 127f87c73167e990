/**
 * The one layout of the checkout pages (no framework; no script but the bank-transfer page's
 * same-origin file): the document, its inline stylesheet and the link's header, and the plain
 * message page. Every value goes through
 * escapeHtml (shared/html.ts). Pages use only inline CSS and same-origin form posts, so the CSP of
 * core/respond.ts `html()` holds.
 */
import { escapeHtml } from "../../shared/html.ts";
import type { PaymentLink } from "../links/link.ts";

/** Unknown reference, unknown session, or an unexpected failure. */
export function messagePage(title: string, text: string): string {
  const body = `<header><h1 id="page-title">${escapeHtml(title)}</h1></header>
<p>${escapeHtml(text)}</p>`;
  return pageLayout(title, body);
}

/** Text ending in a full stop (reasons come from processors with or without one). */
export function sentence(text: string): string {
  const t = text.trim();
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

/** The page header: who is paid, and what for. */
export function pageHeader(p: { businessName: string; link: PaymentLink }): string {
  return `<header>
  <p class="merchant">Payment to <strong>${escapeHtml(p.businessName)}</strong></p>
  <h1 id="page-title">${escapeHtml(p.link.linkName)}</h1>
  <p class="narration">${escapeHtml(p.link.narration)}</p>
</header>`;
}

/**
 * The whole page: `body` inside the layout, refreshed every `refreshSeconds` when given; `head` is
 * trusted markup added to the head (a same-origin script, a refresh for browsers without script).
 */
export function pageLayout(title: string, body: string, refreshSeconds?: number, head = ""): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
${refreshSeconds ? `<meta http-equiv="refresh" content="${refreshSeconds}">` : ""}
<title>${escapeHtml(title)}</title>
<style>${_CSS}</style>
${head}</head>
<body>
<main id="main" aria-labelledby="page-title">
${body}
</main>
</body>
</html>
`;
}

// --- Internal helpers ---

const _CSS = `
:root{color-scheme:light;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;line-height:1.5;color:#1b1b1b;background:#f4f5f7}
body{margin:0}
main{max-width:32rem;margin:2rem auto;padding:1.5rem;background:#fff;border:1px solid #d0d4da;border-radius:.5rem}
h1{font-size:1.5rem;margin:.25rem 0}
h2{font-size:1.15rem;margin:1rem 0 .5rem}
.merchant{margin:0;color:#3d4451}
.narration{margin:.25rem 0 1rem;color:#3d4451}
.field{margin:1rem 0;border:0;padding:0}
label,.label,legend{display:block;font-weight:600}
.hint{margin:.15rem 0 .35rem;color:#4a5160;font-size:.95rem}
.amount{font-size:1.4rem;font-weight:700;margin:.25rem 0}
input[type=text],input[type=email]{box-sizing:border-box;width:100%;font:inherit;padding:.55rem .6rem;border:2px solid #5b6473;border-radius:.3rem}
.field--error input{border-color:#b3261e}
.choice{display:flex;gap:.5rem;align-items:center;margin:.3rem 0}
.choice label{font-weight:400}
.sandbox{background:#fff8e1;padding:.75rem;border:1px dashed #8a6d00;border-radius:.3rem}
.field-error{color:#b3261e;font-weight:600;margin:.2rem 0}
.error-summary{border:3px solid #b3261e;padding:.5rem 1rem;margin:1rem 0;border-radius:.3rem}
.error-summary a{color:#b3261e;font-weight:600}
.notice{border-left:5px solid #1d4ed8;background:#eef2ff;padding:.5rem 1rem;margin:1rem 0}
button,.button{display:inline-block;font:inherit;font-weight:700;color:#fff;background:#14532d;border:0;border-radius:.3rem;padding:.7rem 1.4rem;cursor:pointer;text-decoration:none}
button:hover,.button:hover{background:#166534}
a{color:#1d4ed8}
:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
.facts div{display:flex;gap:.5rem;align-items:baseline}
.facts dt{font-weight:600}
.facts dd{margin:0}
.outcome--successful h2{color:#14532d}
.outcome--failed h2,.outcome--refunded h2{color:#b3261e}
.methods .choice label{font-weight:600}
.transfer-details{margin:1rem 0;padding:1rem;background:#f0fdf4;border:1px solid #86efac;border-radius:.4rem}
.transfer-details div{display:flex;flex-wrap:wrap;gap:.25rem .75rem;align-items:baseline;margin:.35rem 0}
.transfer-details dt{font-weight:600;min-width:8rem}
.transfer-details dd{margin:0}
.account-number{font-size:2rem;font-weight:700;letter-spacing:.08em;font-variant-numeric:tabular-nums;user-select:all;-webkit-user-select:all}
.copy{padding:.35rem .8rem;font-size:.95rem;background:#1d4ed8}
.copy:hover{background:#1e40af}
.countdown{font-size:1.25rem;font-weight:700;font-variant-numeric:tabular-nums}
.alert{border-left:5px solid #b3261e;background:#fef2f2;padding:.5rem 1rem;margin:1rem 0}
@media (max-width:30rem){main{margin:0;border:0;border-radius:0;padding:1rem}.account-number{font-size:1.75rem}.transfer-details dt{min-width:0;width:100%}.facts div{flex-wrap:wrap;gap:0 .5rem}.facts dd{white-space:nowrap}}
[hidden]{display:none!important}
.visually-hidden{position:absolute!important;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0}
`;
