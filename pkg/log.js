// The `logger` / `logLevel` options: a console-like object (default: console) and the least severe
// level that reaches it ('silent' | 'error' | 'warn' | 'info' | 'debug'; default 'warn').
const LEVELS = ['silent', 'error', 'warn', 'info', 'debug'];

/** A logger with all four methods, passing on only what `logLevel` admits. */
export function makeLogger({ logger = globalThis.console, logLevel = 'warn' } = {}) {
  const max = LEVELS.indexOf(logLevel);
  if (max < 0) throw new TypeError(`logLevel must be one of ${LEVELS.join(', ')}; got ${logLevel}`);
  const out = {};
  for (const level of LEVELS.slice(1)) {
    const sink = logger && typeof logger[level] === 'function' ? logger[level].bind(logger) : null;
    out[level] = LEVELS.indexOf(level) <= max && sink ? sink : () => {};
  }
  return out;
}

/** Logs nothing. */
export const silentLog = makeLogger({ logLevel: 'silent' });
