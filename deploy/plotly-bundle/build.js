"use strict";
// `npm install && npm run build` here writes dashboards/static/vendor/plotly/plotly.min.js (README.md says when).
// The options are plotly.js's own (its esbuild-config.js), minified, without the WebGL shader plugin that
// none of these traces needs.
const path = require("path");
const esbuild = require("esbuild");
const { environmentPlugin } = require("esbuild-plugin-environment");
const InlineCSSPlugin = require("esbuild-plugin-inline-css");
const version = require("plotly.js/package.json").version;

esbuild
  .build({
    entryPoints: [path.join(__dirname, "entry.js")],
    outfile: path.join(__dirname, "..", "..", "dashboards", "static", "vendor", "plotly", "plotly.min.js"),
    format: "iife",
    globalName: "Plotly",
    bundle: true,
    minify: true,
    legalComments: "none",
    plugins: [InlineCSSPlugin(), environmentPlugin({ NODE_DEBUG: false })],
    alias: { stream: "stream-browserify" },
    define: { global: "window", "define.amd": "false" },
    target: "es2016",
    banner: {
      js: `/**\n* plotly.js v${version} (core, bar, heatmap, indicator)\n* Copyright 2012-2026, Plotly, Inc.\n* All rights reserved.\n* Licensed under the MIT license\n*/`,
    },
    logLevel: "info",
  })
  .catch(() => process.exit(1));
