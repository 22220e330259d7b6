-- A part of the raw tables stays in the compact format (every column in one file) until it holds 256 MiB of
-- uncompressed data, not 10 MiB. Writing a part in the wide format (a file per column) keeps two 1 MiB buffers
-- for each of the ~90 column streams of `transactions` or `spans`, whatever the part's size: while the demo's
-- history was built, merging 7 small parts of `transactions` (8,192 rows, 3.5 MB compressed) took 166–228 MiB
-- and `spans` 99–126 MiB, the embedded engine's largest allocations (bench/RESULTS.md, footprint). The same merge
-- into a compact part: 125 MiB instead of 293 for 9,800 rows, in a fifth of the time, as small on disk. Parts
-- past 256 MiB (a large installation's older data) are still written wide, where reading a few columns of many
-- rows pays off. Existing parts keep their format until they are merged again.
ALTER TABLE events MODIFY SETTING min_bytes_for_wide_part = 268435456;
ALTER TABLE transactions MODIFY SETTING min_bytes_for_wide_part = 268435456;
ALTER TABLE spans MODIFY SETTING min_bytes_for_wide_part = 268435456;
