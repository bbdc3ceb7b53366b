-- A stored Bloom filter shipped to both shards as a prefilter of orders.
\set id random(1, 8)
SELECT count(*) FROM orders WHERE bloom_contains((SELECT f FROM bfilters WHERE id = :id), customer_id);
