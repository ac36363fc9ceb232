// Which calls the agent loops have already answered. A small model that has just been given a
// call's result often asks for the very same call again (issue 50: 11 of 14 agent prompts on the
// default model), and running it again repeats its side effect. Two calls are the same when they
// name the same tool with equal arguments, whatever the order of their keys.

/** JSON text of `value` with every object's keys sorted, so equal values give equal text. */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The identity of a call to `name` with `args` (an object, or its JSON text). */
export function callKey(name, args) {
  let value = args ?? {};
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      // Not JSON: the text itself is the identity.
    }
  }
  return `${name}\u0000${canonical(value)}`;
}
