-- Sample page loads of the window and filters (`pageload_facts`, one page): the 3 fastest, the 3 nearest the exact
-- median and the 3 slowest by load time (ties by event id), picked from one read of the page's loads (partial
-- sorts: only the first 3 of each order are sorted).
SELECT picked.1 AS kind, toString(picked.2.2) AS event_id, toString(picked.2.3) AS page, picked.2.4 AS ts,
       picked.2.1 AS load_ms, picked.2.5 AS score
FROM
(
    SELECT groupArray((load_ms, event_id, page, ts, score)) AS loads,
           quantileExactInclusive(0.5)(load_ms) AS med
    FROM pageload_facts FINAL
    WHERE ${pageload_filter}
)
ARRAY JOIN
    arrayConcat(
        arrayMap(l -> ('fastest', l), arraySlice(arrayPartialSort(3, loads), 1, 3)),
        arrayMap(l -> ('median', l), arraySlice(arrayPartialSort(l -> (abs(l.1 - med), l.2), 3, loads), 1, 3)),
        arrayMap(l -> ('slowest', l), arraySlice(arrayPartialSort(l -> (-l.1, l.2), 3, loads), 1, 3))
    ) AS picked
