// One card per function call (name, then arguments as indented JSON): the demo page and the
// browser extension show calls alike.
export function callCards(calls) {
  return (calls || []).map((call) => {
    const card = document.createElement('article');
    card.className = 'call';
    const name = document.createElement('h3');
    name.textContent = call.name;
    const args = document.createElement('pre');
    args.textContent = JSON.stringify(call.arguments ?? {}, null, 2);
    card.append(name, args);
    return card;
  });
}
