-- The merge of page-load state rows (macro pageload_state_row or the tables' own rows) per key: sums, the
-- first page load, histograms and distribution counts added (sumMap). Used after the key columns by the hourly and
-- daily fills.
sum(views), min(first_ts), sum(load_sum), sumMap(load_hist.1, load_hist.2), sum(ttfb_sum), sum(ttfb_n),
sumMap(ttfb_hist.1, ttfb_hist.2), sum(dom_sum), sum(dom_n), sumMap(dom_hist.1, dom_hist.2), sum(resource_sum),
sum(resource_n), sum(lcp_n), sumMap(lcp_hist.1, lcp_hist.2), sum(inp_n), sumMap(inp_hist.1, inp_hist.2),
sum(own_inp_n), sumMap(own_inp_hist.1, own_inp_hist.2), sum(cls_n), sumMap(cls_hist.1, cls_hist.2), sum(fcp_n),
sumMap(fcp_hist.1, fcp_hist.2), sum(score_sum), sum(score_n), sum(api_calls), sum(api_errors),
sumMap(api_hist.1, api_hist.2), sum(js_bytes), sum(total_bytes), sumMap(dist.1, dist.2)
