import { createHash } from "node:crypto";

/** The public pages' only stylesheet, inlined; the CSP allows it by its hash (headers.ts). */
export const CSS = `
:root { color-scheme: light; --ink: #1c1c21; --muted: #60606b; --rule: #e3e3e8; --accent: #2453d6; --shade: #f3f5fa; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #eef0f4; }
main { max-width: 860px; margin: 32px auto; background: #fff; border-radius: 10px; padding: 44px 48px; box-shadow: 0 1px 3px rgba(0,0,0,.08), 0 8px 24px rgba(0,0,0,.04); }
p { margin: 0; overflow-wrap: anywhere; }
.top { display: flex; justify-content: space-between; align-items: flex-start; gap: 24px; flex-wrap: wrap; padding-bottom: 24px; border-bottom: 1px solid var(--rule); }
.logo { display: block; max-width: 220px; max-height: 72px; }
.brand-name { font-size: 22px; font-weight: 700; overflow-wrap: anywhere; max-width: 420px; }
.heading { text-align: right; }
h1 { margin: 0; font-size: 26px; letter-spacing: -.01em; }
h2 { font-size: 11px; text-transform: uppercase; letter-spacing: .08em; color: var(--muted); margin: 0 0 6px; }
.status { display: inline-block; margin-top: 8px; padding: 3px 12px; border-radius: 999px; font-weight: 600; font-size: 13px; background: #eef0f5; }
.status-paid, .status-accepted, .status-converted { background: #def7e5; color: #11632d; }
.status-overdue, .status-declined, .status-expired { background: #fde4e1; color: #a2261a; }
.status-void { background: #ececec; color: #555; text-decoration: line-through; }
.status-draft { background: #fff3cd; color: #7a5b00; }
.status-issued { background: #e4ecff; color: #1b3fa6; }
.parties { display: grid; grid-template-columns: 1fr 1fr minmax(240px, 1fr); gap: 28px; margin: 28px 0 32px; }
.party .name { font-weight: 600; }
.party .detail, .muted { color: var(--muted); font-size: 13px; }
dl { display: grid; grid-template-columns: auto 1fr; gap: 3px 14px; margin: 0; font-size: 14px; align-content: start; }
dt { color: var(--muted); } dd { margin: 0; text-align: right; overflow-wrap: anywhere; }
table { width: 100%; border-collapse: collapse; }
th { text-align: left; font-size: 11px; text-transform: uppercase; letter-spacing: .06em; color: var(--muted); font-weight: 600; background: var(--shade); padding: 9px 8px; }
td { border-bottom: 1px solid var(--rule); padding: 11px 8px; vertical-align: top; }
td.description { white-space: pre-wrap; overflow-wrap: anywhere; word-break: break-word; }
.num { text-align: right; white-space: nowrap; }
.rate-narrow { display: none; }
.nowrap { white-space: nowrap; }
.summary { display: flex; justify-content: flex-end; margin-top: 18px; }
.totals { width: 100%; max-width: 380px; }
.totals div { display: flex; justify-content: space-between; gap: 16px; padding: 4px 0; }
.totals div span:last-child { white-space: nowrap; }
.totals .tax { color: var(--muted); font-size: 14px; }
.totals .emphasis { font-weight: 700; font-size: 17px; border-top: 1px solid var(--ink); padding-top: 8px; margin-top: 4px; }
.totals .emphasis + .emphasis { border-top: none; margin-top: 0; padding-top: 4px; color: var(--accent); }
.exemption { margin-top: 16px; color: var(--muted); font-style: italic; font-size: 14px; }
.actions { display: flex; gap: 18px; align-items: center; margin: 28px 0 8px; flex-wrap: wrap; }
.pay { display: inline-block; background: var(--accent); color: #fff; text-decoration: none; font-weight: 600; padding: 12px 28px; border-radius: 8px; font-size: 16px; }
.pay:hover, .pay:focus { background: #1b3fa6; }
a { color: var(--accent); }
.payment { margin-top: 28px; border: 1px solid #c9d6fb; background: #f2f6ff; border-radius: 8px; padding: 16px 20px; }
.payment h2 { color: var(--accent); font-size: 12px; }
.payment dl { max-width: 520px; }
.payment dd { text-align: left; font-variant-numeric: tabular-nums; }
.delivery { margin: -8px 0 22px; font-size: 14px; color: var(--muted); }
.correction { margin: -8px 0 26px; padding: 12px 16px; border-left: 3px solid var(--accent); background: var(--shade); }
.correction .reference { font-weight: 600; }
.correction .memo { margin-top: 4px; white-space: pre-wrap; font-size: 14px; }
section.text { margin-top: 26px; }
section.text p { white-space: pre-wrap; font-size: 14px; }
.doc-footer { margin-top: 36px; padding-top: 14px; border-top: 1px solid var(--rule); color: var(--muted); font-size: 12px; white-space: pre-wrap; overflow-wrap: anywhere; }
body > footer { text-align: center; color: var(--muted); font-size: 13px; margin: 0 0 32px; }
@media (max-width: 700px) {
  main { margin: 0; border-radius: 0; padding: 20px; }
  .parties { grid-template-columns: 1fr; }
  .heading { text-align: left; }
  .hide-narrow { display: none; }
  .rate-narrow { display: block; color: var(--muted); font-size: 13px; white-space: nowrap; }
  th, td { padding-left: 4px; padding-right: 4px; }
  td { font-size: 14px; }
}
@media print { body { background: #fff; } main { box-shadow: none; margin: 0; } .actions { display: none; } }
`;

export const STYLE_HASH = createHash("sha256").update(CSS).digest("base64");
