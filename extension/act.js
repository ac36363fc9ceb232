// What the popup does with a sentence on the two tool sets it can act on: the browser environment
// (calls executed by browser-actions.js) and the target tab's WebMCP tools (page-tools.js). `ui`
// shows and asks: `calls(result)` shows the model's answer, `confirm(text, permissions)` resolves
// true once the user agreed (and granted the permissions), `results(calls, results)` shows them.
import { needsConfirm, permissionsFor, runActions } from './browser-actions.js';
import { readOnly, tabModelContext } from './page-tools.js';
import { pageTools } from './pkg/webmcp.js';

/** The permissions among `wanted` the extension does not hold yet. */
async function missing(wanted) {
  const held = await Promise.all(
    wanted.map((p) => chrome.permissions.contains({ permissions: [p] })),
  );
  return wanted.filter((_, i) => !held[i]);
}

const describe = (calls) =>
  calls.map((c) => `${c.name} ${JSON.stringify(c.arguments ?? {})}`).join('; ');

/** Browser commands: the calls, confirmed when they close or change many tabs, then executed. */
export async function actOnBrowser(engine, query, options, target, ui) {
  const r = await engine.complete(query, options);
  ui.calls(r);
  const calls = r.function_calls || [];
  if (!calls.length) return { ...r, results: [] };
  const permissions = await missing(permissionsFor(calls));
  if (needsConfirm(calls) || permissions.length) {
    const ok = await ui.confirm(`Run ${describe(calls)}?`, permissions);
    if (!ok) return { ...r, results: calls.map(() => ({ error: 'declined by the user' })) };
  }
  // Read again: with the tabs permission just granted, the tab now has its title and address.
  const results = await runActions(calls, await chrome.tabs.get(target.id));
  ui.results(calls, results);
  return { ...r, results };
}

/** The tab's WebMCP tools (none where the page has none or cannot be scripted). */
export async function pageToolList(target) {
  try {
    return await tabModelContext(target.id).getTools();
  } catch {
    return [];
  }
}

/** A page's tools: read-only ones run at once, others after the confirm, through the page. */
export async function actOnPage(engine, query, options, target, ui) {
  const tools = await pageTools(tabModelContext(target.id), {
    confirm: (tool, args) =>
      readOnly(tool) ||
      ui.confirm(`Run ${describe([{ name: tool.name, arguments: args }])} on this page?`, []),
  });
  // One executed answer: the small model was trained on single turns.
  const r = await engine.run(query, { ...options, tools, maxSteps: 1 });
  const calls = r.steps.flatMap((s) => s.function_calls);
  ui.calls({ ...r, function_calls: calls });
  ui.results(calls, r.results);
  return r;
}
