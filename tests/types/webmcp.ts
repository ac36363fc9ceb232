// Compiled by tests/js/hygiene.test.mjs (tsc --noEmit --strict): needle-web/webmcp's pageTools()
// feeds needle.run(), on document.modelContext or anything with its two methods.
import { Needle } from 'needle-web';
import { pageTools, type ModelContextLike, type WebMcpTool } from 'needle-web/webmcp';

export async function page(needle: Needle) {
  const tools = await pageTools();
  const r = await needle.run('Add milk to the list', { tools, maxSteps: 1 });
  const own: ModelContextLike = {
    getTools: () => [{ name: 'add_item', inputSchema: { type: 'object' }, annotations: { readOnlyHint: false } }],
    executeTool: async (tool: WebMcpTool, args) => JSON.stringify({ tool: tool.name, args }),
  };
  const confirmed = await pageTools(own, { confirm: async (tool) => tool.annotations?.readOnlyHint === true });
  const names: string[] = confirmed.map((t) => t.name);
  // @ts-expect-error confirm answers a boolean
  await pageTools(own, { confirm: () => 'yes' });
  // @ts-expect-error a model context needs executeTool
  await pageTools({ getTools: () => [] });
  return [r.results, names];
}
