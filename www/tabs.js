// Tabs: buttons with `role="tab"` and `aria-controls` show their panel and hide the others.
export function initTabs(list) {
  const tabs = [...list.querySelectorAll('[role="tab"]')];
  const select = (tab) => {
    for (const t of tabs) {
      const on = t === tab;
      t.setAttribute('aria-selected', String(on));
      document.getElementById(t.getAttribute('aria-controls')).hidden = !on;
    }
  };
  for (const t of tabs) t.addEventListener('click', () => select(t));
  select(tabs.find((t) => t.getAttribute('aria-selected') === 'true') || tabs[0]);
}
