-- The fact table once more, as 8 range partitions of lo_orderkey (1.25M rows
-- each), for the queries that join a partitioned fact table: each partition's
-- scan gets its own probe. Run by run.sh whenever lineorder_p is missing, so
-- a data directory made before this file existed gets it too. psql -v
-- scale=S as for gen.sql (default 1).
\if :{?scale}
\else
\set scale 1
\endif
SELECT to_regclass('lineorder_p') IS NULL AS missing \gset
\if :missing
-- (The parent has no storage of its own; 18 refuses to call it unlogged.)
CREATE TABLE lineorder_p (LIKE lineorder) PARTITION BY RANGE (lo_orderkey);
SELECT format('CREATE UNLOGGED TABLE lineorder_p%s PARTITION OF lineorder_p '
              'FOR VALUES FROM (%s) TO (%s)', i, (i * 312500 * :scale)::int,
              ((i + 1) * 312500 * :scale)::int)
FROM generate_series(0, 7) i \gexec
INSERT INTO lineorder_p SELECT * FROM lineorder;
VACUUM ANALYZE lineorder_p;
\endif
