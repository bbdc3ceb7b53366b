-- The tables of the README's bulk-maintenance UPDATE: a stored filter named
-- 'vip' and 10,000 staged values to add to it.
CREATE TABLE filters (name text PRIMARY KEY, f bloom NOT NULL);
INSERT INTO filters VALUES ('vip', bloom_new(100000, 0.01));
CREATE TABLE staging (x bigint);
INSERT INTO staging SELECT generate_series(1, 10000);
