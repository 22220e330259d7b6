-- Error events per 1,000 page loads (stacklens/explore/sql.py): the error groups ({errors}: grouped.sql over
-- queries/explore/errors.sql) beside the page loads of the same window, projects, filters and groups ({loads}:
-- grouped.sql over queries/explore/pageloads.sql), joined on the group keys ({join}: LEFT JOIN … USING (g0, …),
-- or a CROSS JOIN of the two single rows). A group without page loads has no rate (NULL), not an infinite one.
SELECT e.*, if(l.samples = 0, NULL, 1000 * e.samples / l.samples) AS {rate}
FROM ({errors}) AS e
{join}
