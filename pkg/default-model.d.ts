/**
 * URL of the default model shipped with the package: a small Needle 3 trained on upstream's six
 * tool environments and the browser's (`needle-web/environments`). A bundler emits the file only
 * for an app that imports this entry.
 */
export const defaultModel: string;
/** Its SHA-256 (hex): pass it as `integrity` to check the download. */
export const defaultModelSha256: string;
