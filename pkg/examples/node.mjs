// The bundled default model in Node, no download and no schema of your own: one request against
// one of upstream's six tool environments.
//
//   node examples/node.mjs ["Turn on the kitchen lights"] [smart_home]
import { Needle } from 'needle-web';
import { environments } from 'needle-web/environments';

const [query = 'Turn on the kitchen lights', name = 'smart_home'] = process.argv.slice(2);
const environment = environments[name];
if (!environment) {
  console.error(`unknown environment "${name}"; one of: ${Object.keys(environments).join(', ')}`);
  process.exit(2);
}

const needle = await Needle.load(); // the bundled default model
try {
  const result = await needle.complete(query, { ...environment, constrained: true });
  console.log(JSON.stringify(result.function_calls));
  console.error(
    `${result.usage.completion_tokens} tokens at ${result.timings.tokens_per_s.toFixed(0)} tok/s`,
  );
} finally {
  needle.dispose();
}
