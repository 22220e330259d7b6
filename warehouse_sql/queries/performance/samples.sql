-- Sample page loads of the window and filters (`pageload_facts`, one page): the 3 fastest, the 3 nearest the exact
-- median and the 3 slowest by load time (ties by event id), picked from one read of the page's loads.
SELECT picked.1 AS kind, toString(picked.2.2) AS event_id, toString(picked.2.3) AS page, picked.2.4 AS ts,
       picked.2.1 AS load_ms, picked.2.5 AS score
FROM
(
    SELECT arraySort(groupArray((load_ms, event_id, page, ts, score))) AS sorted,
           quantileExactInclusive(0.5)(load_ms) AS med
    FROM pageload_facts FINAL
    WHERE ${pageload_filter}
)
ARRAY JOIN
    arrayConcat(
        arrayMap(l -> ('fastest', l), arraySlice(sorted, 1, 3)),
        arrayMap(l -> ('median', l), arraySlice(arraySort(l -> (abs(l.1 - med), l.2), sorted), 1, 3)),
        arrayMap(l -> ('slowest', l), arraySlice(arraySort(l -> (-l.1, l.2), sorted), 1, 3))
    ) AS picked
