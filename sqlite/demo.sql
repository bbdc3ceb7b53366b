-- amq demo (make demo): a Bloom filter as a join prefilter in the sqlite3 CLI.
-- 1,000,000 orders over 100,000 customers, 10,000 of them VIP. The filter
-- answers "may this customer be a VIP?" from about 12 KB, without the VIP
-- table; rows it lets through include about 1% false positives, never a
-- false negative, so an exact check afterwards only sees the survivors.
.echo on
.headers on
.mode column

-- The data, generated here (7919 and 104729 are primes: the ids scatter).
CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE vip(customer_id INTEGER PRIMARY KEY);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, amount REAL NOT NULL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
INSERT INTO customers SELECT i, 'customer ' || i FROM n;
INSERT INTO vip SELECT id FROM customers WHERE id * 7919 % 100000 < 10000;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000)
INSERT INTO orders SELECT i, i * 104729 % 1000003 % 100000 + 1, i * 37 % 50000 / 100.0 FROM n;
SELECT (SELECT count(*) FROM customers) AS customers, (SELECT count(*) FROM vip) AS vip,
       (SELECT count(*) FROM orders) AS orders;

-- 1. Build the filter once with the aggregate and keep it in a table.
CREATE TABLE filters(name TEXT PRIMARY KEY, f BLOB NOT NULL);
INSERT INTO filters SELECT 'vip', bloom_agg(customer_id) FROM vip;
SELECT name, length(f) AS bytes, bloom_count(f) AS estimated_items,
       round(bloom_fpr(f), 4) AS expected_fpr FROM filters;

-- 2. Bind it: a bound filter is parsed once per statement, never per row.
.param set @vip "(SELECT f FROM filters WHERE name = 'vip')"
.timer on

-- 3. The prefilter alone: rows kept.
SELECT count(*) AS kept FROM orders WHERE bloom_contains(@vip, customer_id);

-- 4. False positives among them: kept, but the customer is not a VIP.
SELECT count(*) AS false_positives FROM orders
 WHERE bloom_contains(@vip, customer_id) AND customer_id NOT IN (SELECT customer_id FROM vip);

-- 5. The plain join, for time and for the exact answer.
SELECT count(*) AS vip_orders, round(sum(amount), 2) AS vip_revenue
  FROM orders JOIN vip USING (customer_id);

-- 6. Prefilter, then the exact check on the survivors only: same answer.
SELECT count(*) AS vip_orders, round(sum(amount), 2) AS vip_revenue FROM orders
 WHERE bloom_contains(@vip, customer_id) AND customer_id IN (SELECT customer_id FROM vip);

-- 7. The same prefilter written with the subquery inline: SQLite copies the
--    12 KB blob for every row before the function sees it. Bind it instead.
SELECT count(*) AS kept FROM orders
 WHERE bloom_contains((SELECT f FROM filters WHERE name = 'vip'), customer_id);
.timer off

-- Summary: the measured false-positive rate among non-VIP orders.
SELECT kept, vip_orders, kept - vip_orders AS false_positives,
       round(100.0 * (kept - vip_orders) / (total - vip_orders), 2) AS fp_percent
  FROM (SELECT (SELECT count(*) FROM orders WHERE bloom_contains(@vip, customer_id)) AS kept,
               (SELECT count(*) FROM orders JOIN vip USING (customer_id)) AS vip_orders,
               (SELECT count(*) FROM orders) AS total);
