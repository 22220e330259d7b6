-- The day periods (grain 'day') of the 16-day blocks around the days holding the hours [{start}, {end}), each
-- repeated per block length `s` (2, 4, 8 and 16 days): what a pipeline step merges into the blocks of days once it
-- has merged the days (queries/pipelines/*_blocks.sql). Reading the days of the 16-day blocks makes every smaller
-- block in the range whole. Used as `FROM <periods> FINAL ${days_of_blocks}`, with macro block_period naming each
-- day's block.
ARRAY JOIN [2, 4, 8, 16] AS s
WHERE grain = 'day'
  AND start >= toDateTime(toDate(intDiv(toUInt32(toDate({start:DateTime64(3, 'UTC')})), 16) * 16), 'UTC')
  AND start < toDateTime(toDate(intDiv(toUInt32(toDate({end:DateTime64(3, 'UTC')} - INTERVAL 1 MILLISECOND)), 16) * 16 + 16), 'UTC')
