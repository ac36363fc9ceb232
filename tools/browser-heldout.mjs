#!/usr/bin/env node
// The browser environment (www/presets/browser.json) on phrasings written by hand, never seen in
// training: runs each through the native CLI and scores the calls against the expected ones
// (names and arguments equal, strings ignoring case; call order free). Positive and parallel
// requests count as right when the calls match; unsupported, negated and incomplete ones when
// there is no call. Prints one line per case and the two rates.
//
//   node tools/browser-heldout.mjs [--model F] [--set 1|2] [-- extra needle run flags, e.g. --extractive --value-search]
//
// Set 2 (CASES_2) was written later (session 25), before phase 60 was measured, from the schemas
// only: set 1's misses had begun to guide training choices (`datagen.py --plain`), so set 2 is
// the blind measure from then on.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));

// [query, expected calls]; [] = the model should refuse.
export const CASES = [
  ['Open wikipedia.org in a new tab', [['open_page', { url: 'wikipedia.org', new_tab: true }]]],
  ['Go to github.com', [['open_page', { url: 'github.com' }]]],
  [
    'Switch to the tab with the weather forecast',
    [['switch_to_tab', { title_contains: 'weather forecast' }]],
  ],
  ['Close all the other tabs', [['close_tabs', { which: 'others' }]]],
  [
    'Close the tabs about flights',
    [['close_tabs', { which: 'matching', title_contains: 'flights' }]],
  ],
  ['Pin this tab', [['pin_tab', { pinned: true }]]],
  ['Mute every tab', [['mute_tabs', { which: 'all', muted: true }]]],
  ['Bookmark this page in my Recipes folder', [['bookmark_page', { folder: 'Recipes' }]]],
  ['Find the word refund on this page', [['find_in_page', { text: 'refund' }]]],
  ['Zoom the page to 150 percent', [['zoom_page', { percent: 150 }]]],
  [
    'Set a timer for 2 hours to check the oven',
    [['set_timer', { minutes: 120, label: 'check the oven' }]],
  ],
  [
    'Group my travel tabs into a blue group called Trip',
    [['group_tabs', { name: 'Trip', title_contains: 'travel', color: 'blue' }]],
  ],
  ['Open a new incognito window', [['new_window', { private: true }]]],
  ["Copy this page's link as markdown", [['copy_page_link', { format: 'markdown' }]]],
  [
    'Pin this tab and mute it',
    [
      ['pin_tab', { pinned: true }],
      ['mute_tabs', { which: 'current', muted: true }],
    ],
  ],
  [
    'Zoom to 80 percent and find the word pricing',
    [
      ['zoom_page', { percent: 80 }],
      ['find_in_page', { text: 'pricing' }],
    ],
  ],
  ['Delete my browsing history', []],
  ["Don't close any tabs", []],
  ['Open a website', []],
  ['Set a timer', []],
];

export const CASES_2 = [
  ['Open example.com in this tab', [['open_page', { url: 'example.com', new_tab: false }]]],
  ['Take me to news.ycombinator.com', [['open_page', { url: 'news.ycombinator.com' }]]],
  ['Go back to my email tab', [['switch_to_tab', { title_contains: 'email' }]]],
  ['Close this tab', [['close_tabs', { which: 'current' }]]],
  ['Close duplicate tabs', [['close_tabs', { which: 'duplicates' }]]],
  [
    'Close every tab with invoice in the title',
    [['close_tabs', { which: 'matching', title_contains: 'invoice' }]],
  ],
  ['Unpin this tab', [['pin_tab', { pinned: false }]]],
  ['Unmute this tab', [['mute_tabs', { which: 'current', muted: false }]]],
  ['Mute the other tabs', [['mute_tabs', { which: 'others', muted: true }]]],
  ['Bookmark this page', [['bookmark_page', {}]]],
  ['Save this page to my Travel bookmarks folder', [['bookmark_page', { folder: 'Travel' }]]],
  ['Search this page for shipping', [['find_in_page', { text: 'shipping' }]]],
  ['Set the zoom to 90 percent', [['zoom_page', { percent: 90 }]]],
  ['Remind me in 15 minutes', [['set_timer', { minutes: 15 }]]],
  ['Start a 45 minute timer called laundry', [['set_timer', { minutes: 45, label: 'laundry' }]]],
  [
    'Put my docs tabs in a group named Work',
    [['group_tabs', { name: 'Work', title_contains: 'docs' }]],
  ],
  [
    'Make a green group called Music with the playlist tabs',
    [['group_tabs', { name: 'Music', title_contains: 'playlist', color: 'green' }]],
  ],
  ['Open a private window', [['new_window', { private: true }]]],
  ['Copy the link to this page', [['copy_page_link', { format: 'url' }]]],
  ["Copy this page's title and address", [['copy_page_link', { format: 'title_and_url' }]]],
  [
    'Close duplicate tabs and bookmark this page',
    [
      ['close_tabs', { which: 'duplicates' }],
      ['bookmark_page', {}],
    ],
  ],
  [
    'Open bbc.com in a new tab and set a 10 minute timer',
    [
      ['open_page', { url: 'bbc.com', new_tab: true }],
      ['set_timer', { minutes: 10 }],
    ],
  ],
  [
    'Unmute all tabs and zoom to 100 percent',
    [
      ['mute_tabs', { which: 'all', muted: false }],
      ['zoom_page', { percent: 100 }],
    ],
  ],
  [
    'Copy the link and pin this tab',
    [
      ['copy_page_link', { format: 'url' }],
      ['pin_tab', { pinned: true }],
    ],
  ],
  ['Clear my cookies', []],
  ['Take a screenshot of this page', []],
  ['Do not pin this tab', []],
  ['Switch to a tab', []],
  ['Zoom the page', []],
  ['Group my tabs', []],
];

const norm = (v) => (typeof v === 'string' ? v.toLowerCase() : v);
const key = ([name, args]) =>
  JSON.stringify([
    name,
    Object.entries(args)
      .map(([k, v]) => [k, norm(v)])
      .sort(),
  ]);
const same = (got, want) =>
  JSON.stringify(got.map(key).sort()) === JSON.stringify(want.map(key).sort());

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const dash = argv.indexOf('--');
  const extra = dash >= 0 ? argv.slice(dash + 1) : [];
  const at = argv.indexOf('--model');
  const model = at >= 0 ? resolve(argv[at + 1]) : join(ROOT, 'www/models/default.cact');
  const cli = resolve(ROOT, process.env.NEEDLE_CLI || 'target/release/needle');
  const tools = join(ROOT, 'target/browser-tools.json');
  const env = JSON.parse(readFileSync(join(ROOT, 'www/presets/browser.json'), 'utf8'));
  mkdirSync(join(ROOT, 'target'), { recursive: true });
  writeFileSync(tools, JSON.stringify(env.tools));
  const set = argv.indexOf('--set');
  const cases = set >= 0 && argv[set + 1] === '2' ? CASES_2 : CASES;
  const tally = { act: [0, 0], refuse: [0, 0] };
  for (const [query, want] of cases) {
    const out = execFileSync(
      cli,
      [
        'run',
        '--model',
        model,
        '--tools',
        tools,
        '--system',
        env.system,
        '--query',
        query,
        '--json',
        ...extra,
      ],
      { encoding: 'utf8', maxBuffer: 1 << 26 },
    );
    const got = (JSON.parse(out).function_calls || []).map((c) => [c.name, c.arguments ?? {}]);
    const ok = same(got, want);
    const t = tally[want.length ? 'act' : 'refuse'];
    t[0] += ok;
    t[1] += 1;
    console.log(`${ok ? 'ok  ' : 'MISS'} ${query} -> ${JSON.stringify(got)}`);
  }
  const rate = ([n, d]) => `${n}/${d} (${Math.round((100 * n) / d)}%)`;
  console.log(`positive + parallel: ${rate(tally.act)}; refusals: ${rate(tally.refuse)}`);
}
