-- What a logs search looks in: the record's body and every attribute value, one per line, lower-cased
-- (warehouse_sql/macros/log_filter.sql matches it with LIKE). A search for text of one record in 10 M read
-- the body and the attribute map of every record of the window and lower-cased them as it went (2.5–4.5 s
-- over 30 days, bench/logs.py); kept lower-cased in one column it is read once, and the n-gram bloom filter
-- below skips every granule of 8,192 records that cannot hold the text (any text of four characters or more).
-- A search text holds no control characters (stacklens.logs.search), so it never matches across the line
-- breaks between values. The filter holds ~24,000 distinct 4-grams a granule in 16 KiB (about 2 MiB of index
-- per million records). A text found in most granules (a user id, a common word) still reads the whole
-- column of the window: LZ4 reads it ~35 % faster than ZSTD (27 against 13 MiB per million records).
ALTER TABLE logs
    ADD COLUMN IF NOT EXISTS search_text String
        MATERIALIZED lowerUTF8(concat(body, '\n', arrayStringConcat(mapValues(attributes), '\n')))
        CODEC(LZ4) AFTER dedup_key;
ALTER TABLE logs ADD INDEX IF NOT EXISTS idx_search_text search_text TYPE ngrambf_v1(4, 16384, 3, 0) GRANULARITY 1;
-- Records stored before this file: computed in the background (until then a search computes them as it reads).
ALTER TABLE logs MATERIALIZE COLUMN search_text;
ALTER TABLE logs MATERIALIZE INDEX idx_search_text;
