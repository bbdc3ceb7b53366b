-- The fact table once more, as 8 range partitions of lo_orderkey (1.25M rows
-- each), for the queries that join a partitioned fact table: each partition's
-- scan gets its own probe. Run by run.sh every time: each table is made
-- when it is missing, so a data directory made before this file existed
-- gets it too. psql -v scale=S as for gen.sql (default 1).
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

-- And as 24 range partitions of lo_orderkey, for the join to orders of one
-- partition's range: the probes of the partitions that no order key can
-- reach skip their scans.
SELECT to_regclass('lineorder_p24') IS NULL AS missing \gset
\if :missing
CREATE TABLE lineorder_p24 (LIKE lineorder) PARTITION BY RANGE (lo_orderkey);
SELECT format('CREATE UNLOGGED TABLE lineorder_p24_%s PARTITION OF lineorder_p24 '
              'FOR VALUES FROM (%s) TO (%s)', i,
              CASE WHEN i = 0 THEN 'MINVALUE' ELSE ((i * 2500000 * :scale) / 24)::int::text END,
              CASE WHEN i = 23 THEN 'MAXVALUE'
                   ELSE (((i + 1) * 2500000 * :scale) / 24)::int::text END)
FROM generate_series(0, 23) i \gexec
INSERT INTO lineorder_p24 SELECT * FROM lineorder;
VACUUM ANALYZE lineorder_p24;
\endif
