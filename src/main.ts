import { serve } from "./cli/serve.js";

/**
 * The entry point of `npm start`: the only place in the checkout that reads
 * the environment. The installed command (`payment-intents serve`) runs the
 * same serve().
 */
await serve(process.env);
