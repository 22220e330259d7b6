-- The elements `related_issues` compares, per stored event: (reason, element) pairs of its user, 5-minute
-- window, release and distinct in-app frames, empty elements left out. Used as `ARRAY JOIN ${issue_elements}`.
-- Frozen: migrations already applied render it into their checksums; a different element set is a new macro.
arrayFilter(
    x -> x.2 != '',
    arrayConcat(
        [('same_user', user_key),
         ('same_time_window', toString(toStartOfFiveMinutes(timestamp))),
         ('same_release', toString(release))],
        arrayMap(f -> ('similar_stack', f), arrayDistinct(in_app_frames))
    )
)
