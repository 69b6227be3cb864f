/**
 * The delivery worker thread's first module. Built (dist/), it loads the
 * worker. Run from source, it registers tsx's loader first: the
 * `--import tsx` a worker inherits does not make its `.js` specifiers find
 * the `.ts` files, so without this the worker could load no module of ours.
 * Kept free of TypeScript syntax: Node loads it before any loader is in place.
 */
if (import.meta.url.endsWith(".ts")) {
  const { register } = await import("tsx/esm/api");
  register();
  await import(new URL("./delivery-worker.ts", import.meta.url).href);
} else {
  await import(new URL("./delivery-worker.js", import.meta.url).href);
}
