-- Adds a batch of 20 values to a stored Bloom filter in one bulk UPDATE
-- (bloom_add_agg) and logs each of them in the same transaction.
\set id random(1, 8)
\set v random(1, 1000000)
BEGIN;
UPDATE bfilters
   SET f = COALESCE((SELECT bloom_add_agg(bfilters.f, :v + g) FROM generate_series(0, 19) g), f)
 WHERE id = :id;
INSERT INTO oplog SELECT 'bloom', :id, 1, :v + g FROM generate_series(0, 19) g;
COMMIT;
