// Compiled by tests/js/hygiene.test.mjs (tsc --noEmit --strict): the conversation, agent, extract
// and OpenAI-compatible surfaces' types.
import { Needle, type AgentStep, type ChatCompletionChunk, type Tool } from 'needle-web';

const light: Tool = { name: 'set_light', parameters: { type: 'object', properties: { room: { type: 'string' } } } };

export async function surfaces(needle: Needle) {
  const convo = needle.conversation({ tools: [light, { set_light: ({ room }) => ({ room }) }], system: 'Be brief.', stateless: false, logger: console });
  const r = await convo.send('Kitchen light on', { maxTokens: 32 });
  const roles: ('user' | 'assistant' | 'tool')[] = convo.history.map((t) => t.role);
  convo.reset();
  const run = await needle.run('Kitchen light on', { tools: [{ ...light, fn: async () => 1 }], maxSteps: 2, strict: true, onStep: (s: AgentStep) => s.results });
  const steps: AgentStep[] = run.steps;
  const record = await needle.extract<{ room: string }>('Kitchen light on', light, { strict: false });
  const room: string | undefined = record?.room;
  await needle.extract('x', { title: 'note', type: 'object', properties: { text: { type: 'string' } } }); // a bare JSON Schema
  const c = await needle.chat.completions.create({ messages: [{ role: 'user', content: 'Kitchen light on' }], tools: [light], tool_choice: 'required' });
  const args: string | undefined = c.choices[0].message.tool_calls?.[0].function.arguments;
  const cached: number = c.usage.prompt_tokens_details.cached_tokens;
  const stream = await needle.chat.completions.create({ messages: [{ role: 'user', content: 'x' }], stream: true });
  for await (const chunk of stream) {
    const piece: ChatCompletionChunk = chunk;
    void piece.choices[0]?.delta.tool_calls?.[0].function.arguments;
  }
  // @ts-expect-error tool_choice takes 'none' | 'auto' | 'required' | {function: {name}}
  await needle.chat.completions.create({ messages: [], tool_choice: 'always' });
  return [r.validation.ungrounded, roles, steps, room, args, cached];
}
