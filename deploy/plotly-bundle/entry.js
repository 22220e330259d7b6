"use strict";
// plotly.js with the four trace types StackLens's figures use (dashboards/*_figures.py): scatter (in the core),
// bar, heatmap and indicator. Everything else of the full bundle (maps, WebGL, 3-D, finance) is left out.
var Plotly = require("plotly.js/lib/core");

Plotly.register([require("plotly.js/lib/bar"), require("plotly.js/lib/heatmap"), require("plotly.js/lib/indicator")]);

module.exports = Plotly;
