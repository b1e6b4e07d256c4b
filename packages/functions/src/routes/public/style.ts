import { createHash } from "node:crypto";

/** The public pages' only stylesheet, inlined; the CSP allows it by its hash (headers.ts). */
export const CSS = `
:root { color-scheme: light; --ink: #1c1c21; --muted: #60606b; --rule: #e3e3e8; --accent: #2453d6; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #f4f4f7; }
main { max-width: 820px; margin: 32px auto; background: #fff; border-radius: 12px; padding: 40px; box-shadow: 0 1px 3px rgba(0,0,0,.08); }
header { display: flex; justify-content: space-between; align-items: flex-start; gap: 16px; flex-wrap: wrap; }
h1 { margin: 0; font-size: 28px; }
h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .06em; color: var(--muted); margin: 0 0 6px; }
.status { display: inline-block; padding: 4px 12px; border-radius: 999px; font-weight: 600; font-size: 14px; background: #eef0f5; }
.status-paid, .status-accepted, .status-converted { background: #def7e5; color: #11632d; }
.status-overdue, .status-declined, .status-expired { background: #fde4e1; color: #a2261a; }
.status-void { background: #ececec; color: #555; text-decoration: line-through; }
.status-draft { background: #fff3cd; color: #7a5b00; }
.parties { display: flex; justify-content: space-between; gap: 24px; flex-wrap: wrap; margin: 32px 0; }
.parties p { margin: 0; overflow-wrap: anywhere; }
.muted { color: var(--muted); }
dl { display: grid; grid-template-columns: auto auto; gap: 2px 16px; margin: 0; }
dt { color: var(--muted); } dd { margin: 0; text-align: right; }
table { width: 100%; border-collapse: collapse; }
th { text-align: left; font-size: 13px; color: var(--muted); font-weight: 600; border-bottom: 2px solid var(--rule); padding: 8px 6px; }
td { border-bottom: 1px solid var(--rule); padding: 10px 6px; vertical-align: top; }
td.description { white-space: pre-wrap; overflow-wrap: anywhere; }
.num { text-align: right; white-space: nowrap; }
.totals { margin: 20px 0 0 auto; max-width: 340px; }
.totals div { display: flex; justify-content: space-between; padding: 4px 0; }
.totals .emphasis { font-weight: 700; font-size: 18px; border-top: 1px solid var(--rule); padding-top: 8px; }
.actions { display: flex; gap: 16px; align-items: center; margin: 32px 0 8px; flex-wrap: wrap; }
.pay { display: inline-block; background: var(--accent); color: #fff; text-decoration: none; font-weight: 600; padding: 12px 28px; border-radius: 8px; font-size: 17px; }
.pay:hover, .pay:focus { background: #1b3fa6; }
a { color: var(--accent); }
section.text { margin-top: 28px; }
section.text p { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; }
footer { text-align: center; color: var(--muted); font-size: 13px; margin: 0 0 32px; }
@media (max-width: 600px) { main { margin: 0; border-radius: 0; padding: 20px; } .hide-narrow { display: none; } }
@media print { body { background: #fff; } main { box-shadow: none; margin: 0; } .actions { display: none; } }
`;

export const STYLE_HASH = createHash("sha256").update(CSS).digest("base64");
