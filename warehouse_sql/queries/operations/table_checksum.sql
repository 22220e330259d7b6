-- One table's rows and an order-free checksum of their values (sum of each row's hash), for a backup's
-- manifest and the check after a restore: equal figures mean the same rows, whatever the parts' layout.
-- FINAL: the raw tables replace (and outcomes sum) rows of one key when their parts merge, which a restored
-- table may do before it is checked; read as merged, the figures do not depend on when merges ran.
SELECT count() AS rows, sum(cityHash64(*)) AS checksum
FROM {database:Identifier}.{table:Identifier} FINAL
