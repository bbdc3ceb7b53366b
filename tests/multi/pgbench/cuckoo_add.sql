-- Adds a value to a stored cuckoo filter; logs it and records it as live in
-- the same transaction.
\set id random(1, 8)
\set v random(1, 1000000)
BEGIN;
UPDATE cfilters SET f = cuckoo_add(f, :v) WHERE id = :id;
INSERT INTO oplog VALUES ('cuckoo', :id, 1, :v);
INSERT INTO cuckoo_live VALUES (:id, :v);
COMMIT;
