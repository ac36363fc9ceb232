// Compiled by tests/js/hygiene.test.mjs (tsc --noEmit --strict): issue 42's type fixes. The
// NeedleError constructor, readonly (`as const`) tool lists in chat.completions, create() with a
// run-time `stream` flag, one Logger type, the Conversation's tools/functions, `cache: boolean`.
import { Needle, NeedleError, type ChatCompletion, type ChatCompletionChunk, type Logger, type Tool, type ToolFunction } from 'needle-web';

const tools = [
  {
    type: 'function',
    function: { name: 'set_light', parameters: { type: 'object', properties: { room: { type: 'string' } }, required: ['room'] } },
  },
] as const satisfies readonly Tool[];

export async function fixes(needle: Needle, stream: boolean) {
  const e = new NeedleError('fetch_failed', 'GET x: HTTP 404', { status: 404 });
  const code: string = e.code;
  // @ts-expect-error a message is required
  new NeedleError('internal');

  const c = await needle.chat.completions.create({ messages: [{ role: 'user', content: 'Kitchen light on' }] as const, tools });
  const done: ChatCompletion = c;
  const either = await needle.chat.completions.create({ messages: [], tools, stream });
  if (Symbol.asyncIterator in either) for await (const chunk of either) void (chunk satisfies ChatCompletionChunk);
  else void either.choices[0].message.content;

  const logger: Logger = { warn: () => {} };
  const convo = needle.conversation({ tools: [...tools, { set_light: ({ room }) => String(room) }], logger });
  const names: string[] = [...convo.functions.keys()];
  const fn: ToolFunction | undefined = convo.functions.get('set_light');
  const schemas: Tool[] | string = convo.tools;
  // @ts-expect-error the Conversation's bindings are read-only
  convo.functions.set('x', () => 1);

  await Needle.cacheUsage({ cache: false });
  await Needle.cached('/m.cact', { cache: true });
  return [code, done, names, fn, schemas];
}
