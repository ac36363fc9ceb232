// The markers the models write around their reasoning and their calls, and the end of a turn
// (src/prompt.rs holds the same for the core): known here once for every JS reader of a
// completion's text.
export const THINK_START = '<think>';
export const THINK_END = '</think>';
export const TOOL_CALL_START = '<tool_call>';
export const TOOL_CALL_END = '</tool_call>';
export const IM_END = '<|im_end|>';

/** `{ reasoning, answer }`: the text inside THINK_START ... THINK_END (as far as written), and the rest. */
export function splitThinking(raw) {
  const open = raw.indexOf(THINK_START);
  if (open < 0) return { reasoning: '', answer: raw };
  const from = open + THINK_START.length;
  const close = raw.indexOf(THINK_END, from);
  if (close < 0) return { reasoning: raw.slice(from), answer: raw.slice(0, open) };
  return {
    reasoning: raw.slice(from, close),
    answer: raw.slice(0, open) + raw.slice(close + THINK_END.length),
  };
}
