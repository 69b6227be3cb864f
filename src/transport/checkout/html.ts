import { createHash } from "node:crypto";

/** escapeHtml makes text safe inside HTML text and double-quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/** A piece of markup that is already safe; anything else interpolated is escaped. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** html is a tagged template that escapes every interpolated value unless it is SafeHtml (or a list of it). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((value, i) => {
    const parts = Array.isArray(value) ? value : [value];
    for (const part of parts) {
      if (part === undefined || part === null || part === false) continue;
      out += part instanceof SafeHtml ? part.value : escapeHtml(String(part));
    }
    out += strings[i + 1]!;
  });
  return new SafeHtml(out);
}

/** The page's only style sheet: inline, and allowed by its hash in the CSP. */
export const checkoutCss = `
:root{color-scheme:light;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2433;background:#f4f6fb}
body{margin:0}main{max-width:28rem;margin:2rem auto;padding:0 1rem}
.card{background:#fff;border-radius:12px;box-shadow:0 1px 3px rgba(0,0,0,.12);padding:1.5rem;margin-bottom:1rem}
.merchant{margin:0;color:#5a6478;font-weight:600}.amount{margin:.25rem 0;font-size:2rem}
.muted{color:#5a6478}.badge{display:inline-block;background:#fff3cd;color:#7a5b00;border-radius:4px;padding:.1rem .4rem;font-size:.8rem}
nav{display:flex;gap:.5rem;flex-wrap:wrap;margin:1rem 0}nav a{padding:.4rem .8rem;border-radius:999px;background:#e6eaf4;color:#1d2433;text-decoration:none}
h2{margin-top:0;font-size:1.1rem}label{display:block;margin:.75rem 0 .25rem;font-weight:600}
input{width:100%;box-sizing:border-box;padding:.6rem;border:1px solid #c5cbd8;border-radius:6px;font-size:1rem}
.row{display:flex;gap:.75rem}.row>div{flex:1}
button{margin-top:1rem;width:100%;padding:.75rem;border:0;border-radius:6px;background:#1f5eff;color:#fff;font-size:1rem;font-weight:600;cursor:pointer}
.error{color:#b00020;margin:.25rem 0 0}.notice{border-left:4px solid #1f5eff;padding-left:.75rem}
dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem}dt{color:#5a6478}dd{margin:0;font-weight:600}
`;

export const checkoutCssHash = `sha256-${createHash("sha256").update(checkoutCss).digest("base64")}`;

/** page wraps a body in the shared document: no scripts, one hashed style block. */
export function page(title: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${title}</title>
<style>${new SafeHtml(checkoutCss)}</style>
</head>
<body><main>${body}</main></body>
</html>
`.value;
}
