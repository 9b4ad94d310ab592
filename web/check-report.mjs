// Opens a `gpusage report` page in headless Chromium with the network blocked and checks that every chart
// rendered: no console or page errors, no request left the file, each chart's SVG present with marks, a
// title, axis titles and a legend, and a tooltip on hover; every table scrolls inside its box far enough to
// show its last column, and the page itself is no wider than the window. Each chart's axis labels are
// reported (axes[]: one list of label texts per axis) for the caller to judge. Prints one JSON object on stdout.
//
//   node web/check-report.mjs REPORT.html [--screenshot FILE.png] [--max-height PX] [--width PX]
//
// Exit 0 when every check passed, 1 when one failed, 2 for bad usage or when the browser cannot start.
// The browser: $GPUSAGE_CHROMIUM, else /usr/bin/chromium (Debian's; scripts/install-deps --report installs it).
import { chromium } from 'playwright-core';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

function usage(message) {
  console.error(`check-report: ${message}\nusage: node web/check-report.mjs REPORT.html [--screenshot FILE.png] ` +
                '[--max-height PX] [--width PX]');
  process.exit(2);
}

const args = process.argv.slice(2);
const options = { screenshot: null, maxHeight: 0, width: 1280, timeoutMs: 60000 };
let report = null;
for (let i = 0; i < args.length; ++i) {
  const value = () => (i + 1 < args.length ? args[++i] : usage(`${args[i]} needs a value`));
  if (args[i] === '--screenshot') options.screenshot = value();
  else if (args[i] === '--max-height') options.maxHeight = Number(value());
  else if (args[i] === '--width') options.width = Number(value());
  else if (args[i] === '--timeout-ms') options.timeoutMs = Number(value());
  else if (args[i].startsWith('--')) usage(`unknown option ${args[i]}`);
  else if (report === null) report = args[i];
  else usage(`unexpected argument ${args[i]}`);
}
if (!report) usage('which report? give the HTML file');
if (!existsSync(report)) usage(`'${report}' does not exist`);
const executablePath = process.env.GPUSAGE_CHROMIUM || '/usr/bin/chromium';
if (!existsSync(executablePath)) {
  usage(`no browser at ${executablePath}: run scripts/install-deps --report (Debian's chromium) or set GPUSAGE_CHROMIUM`);
}

const started = Date.now();
const result = {
  report: resolve(report), browser: null, state: null, charts: 0, rendered: 0, chart_errors: [],
  console_errors: [], page_errors: [], blocked_requests: [], charts_detail: [], tables_detail: [],
  page_wider_than_window: null, tooltip: null,
  screenshot: null, elapsed_ms: 0, ok: false,
};

// Scrollbars drawn as a reader sees them (headless hides them by default), so that a screenshot shows that a
// wide table scrolls.
const browser = await chromium.launch({
  executablePath, headless: true, args: ['--no-sandbox', '--disable-gpu'], ignoreDefaultArgs: ['--hide-scrollbars'],
});
try {
  result.browser = browser.version();
  const context = await browser.newContext({ viewport: { width: options.width, height: 900 }, offline: true });
  // The page must be self-contained: anything but the file itself is aborted and recorded.
  const pageUrl = pathToFileURL(resolve(report)).href;
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url === pageUrl || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
    result.blocked_requests.push(url);
    return route.abort();
  });
  const page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') result.console_errors.push(m.text()); });
  page.on('pageerror', (e) => result.page_errors.push(String(e)));
  await page.goto(pageUrl, { waitUntil: 'load' });
  await page.waitForFunction(() => document.body.dataset.report, null, { timeout: options.timeoutMs });
  Object.assign(result, await page.evaluate(() => ({
    state: document.body.dataset.report,
    charts: window.gpusageReport.charts,
    rendered: window.gpusageReport.rendered,
    chart_errors: window.gpusageReport.errors,
  })));
  result.charts_detail = await page.$$eval('div.vega-chart', (elements) => elements.map((el) => {
    const svg = el.querySelector('svg');
    const box = svg ? svg.getBoundingClientRect() : { width: 0, height: 0 };
    const count = (selector) => (svg ? svg.querySelectorAll(selector).length : 0);
    return {
      id: el.id,
      svg: Boolean(svg),
      width: Math.round(box.width),
      height: Math.round(box.height),
      marks: count('g.mark-rect path, g.mark-line path, g.mark-symbol path, g.mark-rule line, g.mark-rule path, ' +
                   'g.mark-text text, g.mark-area path'),
      title: svg ? [...svg.querySelectorAll('g.role-title-text text')].map((t) => t.textContent).join(' ') : '',
      axis_titles: count('g.role-axis-title text'),
      legends: count('g.role-legend'),
      axes: svg ? [...svg.querySelectorAll('g.role-axis')].map((axis) => [...axis.querySelectorAll(
        'g.role-axis-label text')].map((t) => t.textContent)) : [],
    };
  }));
  // Each table's box: scrolled to its right end, its last header cell must lie inside the box.
  result.tables_detail = await page.$$eval('div.table-scroll', (boxes) => boxes.map((box) => {
    const header = box.querySelector('thead tr');
    const last = header ? header.cells[header.cells.length - 1] : null;
    box.scrollLeft = box.scrollWidth;
    const right = last ? last.getBoundingClientRect().right : 0;
    const reachable = !last || right <= box.getBoundingClientRect().right + 1;
    const scrolled = box.scrollLeft;
    box.scrollLeft = 0;
    return {
      id: box.parentElement ? box.parentElement.id : '', overflow_x: getComputedStyle(box).overflowX,
      scroll_width: box.scrollWidth, client_width: box.clientWidth, scrolled, last_column_reachable: reachable,
    };
  }));
  result.page_wider_than_window = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
  // A tooltip: hover the first bar or point of the first chart and read vega-tooltip's element.
  const mark = await page.$('div.vega-chart g.mark-rect path, div.vega-chart g.mark-symbol path');
  if (mark) {
    await mark.hover({ force: true });
    await page.waitForTimeout(300);
    result.tooltip = await page.evaluate(() => {
      const tip = document.getElementById('vg-tooltip-element');
      return tip && tip.classList.contains('visible') ? tip.textContent.trim().slice(0, 200) : null;
    });
    await page.mouse.move(0, 0);
  }
  if (options.screenshot) {
    const size = await page.evaluate(() => ({ height: document.documentElement.scrollHeight }));
    const height = options.maxHeight > 0 ? Math.min(size.height, options.maxHeight) : size.height;
    await page.screenshot({ path: options.screenshot, fullPage: true, clip: { x: 0, y: 0, width: options.width, height } });
    result.screenshot = resolve(options.screenshot);
  }
} finally {
  await browser.close();
}
result.elapsed_ms = Date.now() - started;
const everyChart = result.charts_detail.every((c) => c.svg && c.width > 0 && c.height > 0 && c.marks > 0 &&
                                                   c.title.length > 0 && c.axis_titles > 0 && c.legends > 0);
result.ok = result.state === 'done' && result.charts > 0 && result.rendered === result.charts && everyChart &&
            result.console_errors.length === 0 && result.page_errors.length === 0 &&
            result.tables_detail.every((t) => t.overflow_x === 'auto' && t.last_column_reachable) &&
            result.page_wider_than_window === false &&
            result.blocked_requests.length === 0 && result.tooltip !== null;
console.log(JSON.stringify(result, null, 1));
process.exit(result.ok ? 0 : 1);
