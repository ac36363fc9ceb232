#!/usr/bin/env node
// The browser environment (www/presets/browser.json) on phrasings written by hand, never seen in
// training: runs each through the native CLI and scores the calls against the expected ones
// (names and arguments equal, strings ignoring case; call order free). Positive and parallel
// requests count as right when the calls match; unsupported, negated and incomplete ones when
// there is no call. Prints one line per case and the two rates.
//
//   node tools/browser-heldout.mjs [--model F] [--set 1|2|3] [-- extra needle run flags, e.g. --extractive --value-search]
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

// Set 3 (session 27) was written by a helper that read only browser.json (not the generator, not
// sets 1-2), before any phase was measured on it.
export const CASES_3 = [
  ['Open github.com', [['open_page', { url: 'github.com' }]]],
  [
    'can you pull up news.ycombinator.com in a new tab',
    [['open_page', { url: 'news.ycombinator.com', new_tab: true }]],
  ],
  ['Switch me over to the Gmail tab', [['switch_to_tab', { title_contains: 'Gmail' }]]],
  ["I'm done with this article, close the tab.", [['close_tabs', { which: 'current' }]]],
  ['close everything except this tab', [['close_tabs', { which: 'others' }]]],
  [
    'I think I have the same pages open twice, get rid of the duplicate tabs',
    [['close_tabs', { which: 'duplicates' }]],
  ],
  [
    'Close every tab that has YouTube in the title',
    [['close_tabs', { which: 'matching', title_contains: 'YouTube' }]],
  ],
  ['pin this tab', [['pin_tab', { pinned: true }]]],
  ["I don't need this one stuck at the left anymore, unpin it", [['pin_tab', { pinned: false }]]],
  ["This tab's autoplaying something, mute it", [['mute_tabs', { which: 'current', muted: true }]]],
  ['ok unmute all my tabs', [['mute_tabs', { which: 'all', muted: false }]]],
  ["Silence every tab except the one I'm on", [['mute_tabs', { which: 'others', muted: true }]]],
  ['bookmark this', [['bookmark_page', {}]]],
  [
    'Save this page to my Recipes bookmarks folder please',
    [['bookmark_page', { folder: 'Recipes' }]],
  ],
  ['Find "refund policy" on this page', [['find_in_page', { text: 'refund policy' }]]],
  ['The text is tiny, zoom to 150%', [['zoom_page', { percent: 150 }]]],
  ['25 min timer', [['set_timer', { minutes: 25 }]]],
  [
    'Can you set a timer for 2 hours? Label it laundry.',
    [['set_timer', { minutes: 120, label: 'laundry' }]],
  ],
  [
    'Put all the tabs with flights in the title into a group called Trip',
    [['group_tabs', { name: 'Trip', title_contains: 'flights' }]],
  ],
  [
    'group my Jira tabs into a blue group named Sprint',
    [['group_tabs', { name: 'Sprint', title_contains: 'Jira', color: 'blue' }]],
  ],
  ['I need an incognito window', [['new_window', { private: true }]]],
  [
    "Copy this page's link as markdown so I can paste it in my notes",
    [['copy_page_link', { format: 'markdown' }]],
  ],
  [
    'Open a new window and go to wikipedia.org',
    [
      ['new_window', {}],
      ['open_page', { url: 'wikipedia.org' }],
    ],
  ],
  [
    "Copy the link to this page and then close it, I'm done here",
    [
      ['copy_page_link', { format: 'url' }],
      ['close_tabs', { which: 'current' }],
    ],
  ],
  [
    'Bookmark this under Reading and pin the tab',
    [
      ['bookmark_page', { folder: 'Reading' }],
      ['pin_tab', { pinned: true }],
    ],
  ],
  [
    'put the zoom back to normal and find shipping on the page',
    [
      ['zoom_page', { percent: 100 }],
      ['find_in_page', { text: 'shipping' }],
    ],
  ],
  [
    'Switch to the Spotify tab and unmute it',
    [
      ['switch_to_tab', { title_contains: 'Spotify' }],
      ['mute_tabs', { which: 'current', muted: false }],
    ],
  ],
  [
    'copy the title and link of this page, then open notion.so in this same tab',
    [
      ['copy_page_link', { format: 'title_and_url' }],
      ['open_page', { url: 'notion.so', new_tab: false }],
    ],
  ],
  [
    'Mute every tab and start an hour and a half timer called focus',
    [
      ['mute_tabs', { which: 'all', muted: true }],
      ['set_timer', { minutes: 90, label: 'focus' }],
    ],
  ],
  [
    'close the duplicate tabs, then group the ones with React in the title as Docs, make it green',
    [
      ['close_tabs', { which: 'duplicates' }],
      ['group_tabs', { name: 'Docs', title_contains: 'React', color: 'green' }],
    ],
  ],
  ['Clear my browsing history from the last hour', []],
  ['print this page', []],
  ['Can you translate this page into Spanish?', []],
  ['Can you open the site in a new tab?', []],
  ['Set a timer for the pasta', []],
  ['find a word on this page for me', []],
  ["Don't close any tabs, I still need them all", []],
  ["Please don't bookmark this page, I'm just browsing", []],
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
  const setAt = argv.indexOf('--set');
  const set = setAt >= 0 ? argv[setAt + 1] : '1';
  const cases = new Map([
    ['1', CASES],
    ['2', CASES_2],
    ['3', CASES_3],
  ]).get(set);
  if (!cases) {
    console.error(`--set takes 1, 2 or 3, not ${set}`);
    process.exit(2);
  }
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
