-- A state period starts on a multiple of its grain since 1970-01-01 (the grain's value is its length in minutes):
-- the state tables' checks (queries/pipelines/checks/).
toUInt32(start) % (CAST(grain, 'UInt16') * 60) = 0
