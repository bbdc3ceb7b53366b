-- Star-schema data for the join-filter benchmark (bench/join/run.sh), shaped
-- like SSB/TPC-H: a 10M-row fact table (lineorder) and dimensions date_dim
-- (2,557 days), customer (150k, 25 nations in 5 regions), supplier (10k),
-- part (200k: 5 makers, 25 categories, 1,000 brands, 5% "green" names) and
-- orders (2.5M, 20% urgent). Deterministic (setseed). Unlogged: the data
-- survives the clean shutdowns of the kept benchmark cluster. psql -v
-- scale=S multiplies every size but date_dim's by S (default 1; run.sh's
-- smoke run, AMQ_BENCH_SMOKE=1, takes 0.001).
\if :{?scale}
\else
\set scale 1
\endif
SELECT setseed(0.42);
CREATE UNLOGGED TABLE date_dim AS
SELECT g AS d_datekey, 1992 + g / 365 AS d_year, 1 + (g % 365) / 31 AS d_month
FROM generate_series(0, 2556) g;
CREATE UNLOGGED TABLE customer AS
SELECT g AS c_custkey, 'Customer#' || g AS c_name, g % 25 AS c_nation,
       (ARRAY['AFRICA', 'AMERICA', 'ASIA', 'EUROPE', 'MIDDLE EAST'])[(g % 25) / 5 + 1] AS c_region
FROM generate_series(1, (150000 * :scale)::int) g;
CREATE UNLOGGED TABLE supplier AS
SELECT g AS s_suppkey, 'Supplier#' || g AS s_name, (g * 7) % 25 AS s_nation,
       (ARRAY['AFRICA', 'AMERICA', 'ASIA', 'EUROPE', 'MIDDLE EAST'])[((g * 7) % 25) / 5 + 1] AS s_region
FROM generate_series(1, (10000 * :scale)::int) g;
CREATE UNLOGGED TABLE part AS
SELECT g AS p_partkey,
       CASE WHEN g % 20 = 0 THEN 'green ' ELSE 'plain ' END || 'part ' || g AS p_name,
       'MFGR#' || (1 + g % 5) AS p_mfgr,
       'MFGR#' || (1 + g % 5) || (1 + (g / 5) % 5) AS p_category,
       'MFGR#' || (1 + g % 5) || (1 + (g / 5) % 5) || (1 + (g / 25) % 40) AS p_brand,
       1 + g % 50 AS p_size
FROM generate_series(1, (200000 * :scale)::int) g;
CREATE UNLOGGED TABLE orders AS
SELECT g AS o_orderkey, CASE WHEN random() < 0.2 THEN '1-URGENT' ELSE '3-MEDIUM' END AS o_priority,
       md5(g::text) AS o_comment
FROM generate_series(0, (2500000 * :scale)::int - 1) g;
CREATE UNLOGGED TABLE lineorder AS
SELECT g / 4 AS lo_orderkey, g % 4 AS lo_linenumber,
       1 + (random() * (150000 * :scale - 1))::int AS lo_custkey,
       1 + (random() * (200000 * :scale - 1))::int AS lo_partkey,
       1 + (random() * (10000 * :scale - 1))::int AS lo_suppkey,
       (random() * 2556)::int AS lo_orderdate,
       1 + (random() * 49)::int AS lo_quantity,
       (random() * 100000)::int AS lo_revenue,
       (random() * 60000)::int AS lo_supplycost
FROM generate_series(0, (10000000 * :scale)::int - 1) g;
ANALYZE;
