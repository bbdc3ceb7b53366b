-- Adds a value to a stored Bloom filter and logs it in the same transaction.
\set id random(1, 8)
\set v random(1, 1000000)
BEGIN;
UPDATE bfilters SET f = bloom_add(f, :v) WHERE id = :id;
INSERT INTO oplog VALUES ('bloom', :id, 1, :v);
COMMIT;
