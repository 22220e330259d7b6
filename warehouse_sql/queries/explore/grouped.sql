-- The groups of one Explore query (stacklens/explore/sql.py): the dataset's rows ({rows}: queries/explore/<dataset>.sql)
-- that pass the query's filters ({where}), one row per group ({group_by}: the group-by fields g0…g2 and, for a
-- time series, the bucket; none: one row for the whole window) with its aggregates ({columns}: a0…, the values
-- n0… of each aggregate over a metric, and `samples`, the rows it summarises). Every placeholder is filled from
-- the fixed fragments of stacklens/explore/ chosen by key (dataset columns, catalog functions, generated aliases);
-- every value a user gave is a server-side parameter ({v0:String} …).
SELECT {columns}
FROM ({rows})
WHERE {where}
{group_by}
