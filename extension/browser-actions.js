// The browser environment's executors (www/presets/browser.json): each call the model makes is
// run with the extension APIs on the target tab (the one under the popup). Each action names the
// optional permissions it needs (requested on first use, popup.js) and whether it is confirmed
// before it runs: calls that close tabs or change many tabs at once.

/** The address as the user gave it, with https:// when it has no scheme; only http(s) opens. */
export function pageUrl(text) {
  const raw = String(text ?? '').trim();
  const url = new URL(/^[a-z][a-z0-9+.-]*:/i.test(raw) ? raw : `https://${raw}`);
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new Error(`only web addresses open (not ${url.protocol})`);
  return url.href;
}

const hasWords = (words) => (tab) =>
  String(tab.title ?? '')
    .toLowerCase()
    .includes(String(words ?? '').toLowerCase());

/** The tabs of the target's window whose title has `words` (none when no words are given). */
async function matching(target, words) {
  if (!String(words ?? '').trim()) throw new Error('no title words given');
  return (await chrome.tabs.query({ windowId: target.windowId })).filter(hasWords(words));
}

/** The tabs `close_tabs` closes, from the target tab's window. */
async function tabsToClose(target, { which, title_contains }) {
  const tabs = await chrome.tabs.query({ windowId: target.windowId });
  if (which === 'current') return [target];
  if (which === 'others') return tabs.filter((t) => t.id !== target.id && !t.pinned);
  if (which === 'matching') return matching(target, title_contains);
  if (which === 'duplicates') {
    const seen = new Set();
    return tabs.filter((t) => (seen.has(t.url) ? true : (seen.add(t.url), false)));
  }
  throw new Error(`which must be current, others, duplicates or matching (got ${which})`);
}

async function mutedTabs(target, which) {
  if (which === 'current') return [target];
  const tabs = await chrome.tabs.query({});
  if (which === 'all') return tabs;
  if (which === 'others') return tabs.filter((t) => t.id !== target.id);
  throw new Error(`which must be current, all or others (got ${which})`);
}

/** The bookmark folder titled `name` (the first one found), made in "Other bookmarks" when none. */
async function folder(name) {
  const found = (await chrome.bookmarks.search({ title: name })).find((n) => !n.url);
  return found ?? (await chrome.bookmarks.create({ title: name }));
}

const LINK_FORMATS = {
  url: (tab) => tab.url,
  markdown: (tab) => `[${tab.title}](${tab.url})`,
  title_and_url: (tab) => `${tab.title} ${tab.url}`,
};

/**
 * Per tool: `permissions` (optional ones it needs), `confirm(args)` (true: shown and confirmed
 * before it runs), `run(args, { target })` (the result shown; `closed` lets the popup offer undo).
 */
export const ACTIONS = {
  open_page: {
    permissions: [],
    run: async ({ url, new_tab }, { target }) => {
      const href = pageUrl(url);
      if (new_tab) await chrome.tabs.create({ url: href, windowId: target.windowId });
      else await chrome.tabs.update(target.id, { url: href });
      return { opened: href, new_tab: !!new_tab };
    },
  },
  switch_to_tab: {
    permissions: ['tabs'],
    run: async ({ title_contains }) => {
      const tab = (await chrome.tabs.query({})).find(hasWords(title_contains));
      if (!tab) throw new Error(`no tab's title has "${title_contains}"`);
      await chrome.tabs.update(tab.id, { active: true });
      await chrome.windows.update(tab.windowId, { focused: true });
      return { switched_to: tab.title };
    },
  },
  close_tabs: {
    permissions: ['tabs', 'sessions'],
    confirm: () => true,
    run: async (args, { target }) => {
      const tabs = await tabsToClose(target, args);
      await chrome.tabs.remove(tabs.map((t) => t.id));
      return { closed: tabs.length };
    },
  },
  pin_tab: {
    permissions: [],
    run: async ({ pinned }, { target }) => {
      await chrome.tabs.update(target.id, { pinned: !!pinned });
      return { pinned: !!pinned };
    },
  },
  mute_tabs: {
    permissions: ['tabs'],
    confirm: ({ which }) => which !== 'current',
    run: async ({ which, muted }, { target }) => {
      const tabs = await mutedTabs(target, which);
      for (const t of tabs) await chrome.tabs.update(t.id, { muted: !!muted });
      return { muted: !!muted, tabs: tabs.length };
    },
  },
  bookmark_page: {
    permissions: ['bookmarks', 'tabs'],
    run: async ({ folder: name }, { target }) => {
      const parentId = name ? (await folder(name)).id : undefined;
      const mark = await chrome.bookmarks.create({
        parentId,
        title: target.title,
        url: target.url,
      });
      return { bookmarked: mark.url, folder: name ?? null };
    },
  },
  find_in_page: {
    permissions: [],
    run: async ({ text }, { target }) => {
      const [{ result }] = await chrome.scripting.executeScript({
        target: { tabId: target.id },
        func: (words) => window.find(words, false, false, true),
        args: [String(text ?? '')],
      });
      return { found: result === true };
    },
  },
  zoom_page: {
    permissions: [],
    run: async ({ percent }, { target }) => {
      if (!(Number.isInteger(percent) && percent >= 25 && percent <= 500))
        throw new Error('percent must be a whole number from 25 to 500');
      await chrome.tabs.setZoom(target.id, percent / 100);
      return { zoom: percent };
    },
  },
  set_timer: {
    permissions: ['alarms', 'notifications'],
    run: async ({ minutes, label }) => {
      if (!(Number.isInteger(minutes) && minutes >= 1 && minutes <= 1440))
        throw new Error('minutes must be a whole number from 1 to 1440');
      // background.js rings it: the alarm's name carries the label.
      const name = `needle-timer:${Date.now()}:${label ?? ''}`;
      await chrome.alarms.create(name, { delayInMinutes: minutes });
      return { timer: minutes, label: label ?? null };
    },
  },
  group_tabs: {
    permissions: ['tabs', 'tabGroups'],
    run: async ({ name, title_contains, color }, { target }) => {
      const tabs = await matching(target, title_contains);
      if (!tabs.length) throw new Error(`no tab's title has "${title_contains}"`);
      const groupId = await chrome.tabs.group({ tabIds: tabs.map((t) => t.id) });
      await chrome.tabGroups.update(groupId, {
        title: String(name ?? ''),
        ...(color && { color }),
      });
      return { grouped: tabs.length, name };
    },
  },
  new_window: {
    permissions: [],
    run: async (args) => {
      await chrome.windows.create({ incognito: args.private === true });
      return { private: args.private === true };
    },
  },
  copy_page_link: {
    permissions: ['tabs'],
    run: async ({ format }, { target }) => {
      const make = LINK_FORMATS[format ?? 'url'];
      if (!make) throw new Error(`format must be url, markdown or title_and_url (got ${format})`);
      const text = make(target);
      await navigator.clipboard.writeText(text);
      return { copied: text };
    },
  },
};

/** The action for a call, or an error naming the tool the environment does not have. */
export function actionFor(call) {
  const action = Object.hasOwn(ACTIONS, call.name) ? ACTIONS[call.name] : null;
  if (!action) throw new Error(`unknown browser action: ${call.name}`);
  return action;
}

/** The optional permissions a list of calls needs, each once. */
export const permissionsFor = (calls) => [
  ...new Set(calls.flatMap((c) => actionFor(c).permissions)),
];

/** Whether any of the calls is confirmed before it runs. */
export const needsConfirm = (calls) => calls.some((c) => actionFor(c).confirm?.(c.arguments ?? {}));

/** Runs the calls in order on `target`; one result per call: its value or `{ error }`. */
export async function runActions(calls, target) {
  const results = [];
  for (const call of calls) {
    try {
      results.push(await actionFor(call).run(call.arguments ?? {}, { target }));
    } catch (e) {
      results.push({ error: e instanceof Error ? e.message : String(e) });
    }
  }
  return results;
}
