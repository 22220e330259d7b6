// Bundled by esbuild at test time from the npm package (no CDN): exposes the SDK as window.Sentry.
import * as Sentry from "@sentry/browser";

window.Sentry = Sentry;
