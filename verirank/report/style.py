"""The report's stylesheet, inlined into report.html so the folder needs nothing else."""

CSS = """
:root {
  --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; --soft: #f6f8fa;
  --ok: #1a7f37; --ok-bg: #dafbe1; --no: #6e7781; --no-bg: #eef1f4;
  --bad: #cf222e; --bad-bg: #ffebe9; --warn: #9a6700; --warn-bg: #fff8c5;
  --rel: #0969da; --rel-bg: #ddf4ff;
}
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
       background: #fff; }
header.top { background: #24292f; color: #fff; padding: 18px 32px; }
header.top h1 { margin: 0; font-size: 22px; }
header.top p { margin: 4px 0 0; color: #c9d1d9; font-size: 13px; }
main { max-width: 1280px; margin: 0 auto; padding: 8px 32px 48px; }
h2 { font-size: 20px; margin: 28px 0 8px; }
h3 { font-size: 15px; margin: 16px 0 6px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
code, .mono { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.muted { color: var(--muted); }
.small { font-size: 12px; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin: 16px 0; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 8px 14px; min-width: 120px; background: var(--soft); }
.card b { display: block; font-size: 22px; }
table { border-collapse: collapse; margin: 6px 0 12px; }
th, td { border-bottom: 1px solid var(--line); padding: 5px 10px; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; font-size: 13px; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.best td { font-weight: 600; }
.p { display: block; font-size: 11px; color: var(--muted); font-weight: 400; }
.sig { color: var(--ok); }
.badge { display: inline-block; border-radius: 999px; padding: 1px 9px; font-size: 12px; font-weight: 600;
         margin: 2px 4px 2px 0; white-space: nowrap; }
.badge.ok { background: var(--ok-bg); color: var(--ok); }
.badge.no { background: var(--no-bg); color: var(--no); }
.badge.bad { background: var(--bad-bg); color: var(--bad); }
.badge.warn { background: var(--warn-bg); color: var(--warn); }
.badge.rel { background: var(--rel-bg); color: var(--rel); }
.move { font-size: 12px; font-weight: 700; }
.move.up { color: var(--ok); } .move.down { color: var(--bad); }
section.query { border-top: 3px solid var(--line); margin-top: 36px; }
section.query > h2 { margin-top: 18px; }
.lists { display: grid; grid-template-columns: 1fr 1fr; gap: 24px; }
@media (max-width: 900px) { .lists { grid-template-columns: 1fr; } }
ol.results { list-style: none; padding: 0; margin: 0; }
ol.results li { display: flex; gap: 10px; padding: 8px 10px; border: 1px solid var(--line); border-radius: 8px;
                margin-bottom: 6px; background: #fff; }
ol.results li.verified { border-left: 5px solid var(--ok); }
ol.results li.unverified { border-left: 5px solid var(--line); }
.rank { font-weight: 700; font-size: 18px; min-width: 26px; color: var(--muted); text-align: right; }
.what { min-width: 0; }
.what a { color: var(--ink); font-weight: 600; text-decoration: none; }
.what a:hover { text-decoration: underline; }
.host { color: var(--muted); font-size: 12px; overflow-wrap: anywhere; }
.why { color: var(--muted); font-size: 12px; }
details.page { border: 1px solid var(--line); border-radius: 8px; margin: 8px 0; }
details.page > summary { cursor: pointer; padding: 8px 12px; background: var(--soft); border-radius: 8px; }
details.page[open] > summary { border-bottom: 1px solid var(--line); border-radius: 8px 8px 0 0; }
details.page .body { padding: 4px 16px 14px; scroll-margin-top: 60px; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 6px 0; font-size: 13px; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; overflow-wrap: anywhere; }
table.steps td.text { max-width: 360px; }
table.steps td.xpath { max-width: 260px; overflow-wrap: anywhere; }
.strip { display: flex; gap: 12px; overflow-x: auto; padding: 6px 0 10px; }
figure.shot { margin: 0; flex: 0 0 200px; border: 1px solid var(--line); border-radius: 8px; padding: 6px;
              background: var(--soft); }
figure.shot img { display: block; width: 186px; height: auto; border-radius: 4px; background: #fff; }
figure.shot figcaption { font-size: 12px; margin-top: 6px; overflow-wrap: anywhere; }
figure.shot.failed { border-color: #fb8c00; }
figure.shot.final { border-color: var(--ink); }
.instr { font-style: italic; }
ol.evidence { list-style: none; padding: 0; margin: 4px 0 10px; }
ol.evidence > li { display: flex; gap: 12px; align-items: flex-start; border-left: 4px solid var(--ok);
                   padding: 4px 0 8px 10px; margin-bottom: 8px; }
ol.evidence > li.missing { border-left-color: var(--line); }
ol.evidence .cite { flex: 1 1 240px; font-size: 13px; }
figure.evidence { margin: 0; flex: 0 0 170px; border: 1px solid var(--ok); border-radius: 8px; padding: 6px;
                  background: var(--soft); }
figure.evidence img { display: block; width: 156px; height: auto; border-radius: 4px; background: #fff; }
figure.evidence figcaption { font-size: 12px; margin-top: 6px; }
.note { border-left: 3px solid var(--line); padding: 2px 10px; color: var(--muted); font-size: 13px; }
nav.toc ol { columns: 2; font-size: 14px; }
@media (max-width: 900px) { nav.toc ol { columns: 1; } }
"""
